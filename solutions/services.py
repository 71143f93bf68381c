"""Writes: registering programmers and problems, submissions, solves, and board rebuilds."""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import secrets
from collections import defaultdict
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from bson import ObjectId
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from pymongo import InsertOne, UpdateMany
from pymongo.collection import Collection
from pymongo.errors import BulkWriteError, ClientBulkWriteException, DuplicateKeyError

from . import holds, leaderboard, limits, live, mongo, rules, solvers
from .clock import today
from .leaderboard import applier, entries, orders, rebuild
from .leaderboard.entries import from_solves
from .live import boards_touch
from .models import Board, Problem, Programmer, handle_validator

# A judge's clock may run this far ahead of ours.
CLOCK_SKEW = dt.timedelta(minutes=5)


class SolveRejected(ValueError):
    """A solve whose time the boards cannot take (in the future, or too late)."""


class SubmissionRefused(ValueError):
    """An attempt the site does not take (a banned programmer; competitions add their own)."""


class HandleLooksTaken(ValidationError):
    """A new handle that looks like another programmer's (`rules.handle_skeleton`), whose
    handle is ``params["looks_like"]``."""


def solve_day(solved_at: dt.datetime) -> int:
    return leaderboard.epoch_day(solved_at, settings.LEADERBOARD_TIME_ZONE)


# --- programmers and problems ----------------------------------------------------------------


def programmer_create(
    *, user: AbstractBaseUser | None, handle: str, country: str = "", organization: str = ""
) -> Programmer:
    """A new programmer. Raises ValidationError for a bad or taken handle, HandleLooksTaken
    for one that looks like a taken one."""
    handle_validator(handle)
    if Programmer.objects.handle_is(handle).exists():
        raise ValidationError("That handle is taken.", code="taken")
    handle_check_unlike_others(handle)
    try:
        with transaction.atomic():
            return Programmer.objects.create(
                user=user, handle=handle, country=country.upper(), organization=organization
            )
    except IntegrityError as error:  # two sign-ups racing for one handle
        raise ValidationError("That handle is taken.", code="taken") from error


def programmer_get_or_register(*, handle: str) -> Programmer:
    """The programmer with this handle (any case), registered on first use by a judge. A new
    handle that looks like a taken one is refused (HandleLooksTaken): the judge meant that
    programmer, or the handle would pass for theirs on every board."""
    handle_validator(handle)
    existing = Programmer.objects.handle_is(handle).first()
    if existing:
        return existing
    handle_check_unlike_others(handle)
    try:
        with transaction.atomic():
            return Programmer.objects.create(handle=handle)
    except IntegrityError:
        return Programmer.objects.handle_is(handle).get()


def handle_check_unlike_others(handle: str) -> None:
    """Raise HandleLooksTaken when a new handle looks like another programmer's (one indexed
    equality). Two look-alikes signing up in the same instant may both pass: the rule keeps
    impostors off, it is not what the boards' correctness rests on."""
    looks_like = Programmer.objects.looking_like(handle).values_list("handle", flat=True).first()
    if looks_like is not None:
        raise HandleLooksTaken(
            "That handle looks like %(looks_like)s, which is taken: pick one that reads "
            "differently.",
            code="looks_taken",
            params={"looks_like": looks_like},
        )


def problem_get_or_register(*, slug: str) -> Problem:
    """The problem with this slug, registered (unpublished, no answer) on first use by a judge."""
    problem, _ = Problem.objects.get_or_create(
        slug=slug, defaults={"title": slug, "published": False}
    )
    return problem


# --- submissions and solves ------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    counted: bool


def submission_record(
    *,
    programmer: Programmer,
    problem: Problem,
    accepted: bool,
    submitted_at: dt.datetime | None = None,
    answer: str | None = None,
    competitions: Iterable[str] = (),
    key: str | None = None,
    source: str = rules.SITE,
) -> Verdict:
    """Record one attempt (from the answer form, a competition page or a judge) and count a
    first accepted one as a solve on every board.

    `competitions`: the slugs of the competitions whose standings the attempt counts in.
    `key`: a judge's idempotency key, used as the attempt's id, so a retry after a fault records
    nothing twice and is told whether its solve counted. `source`: `rules.SITE` or `rules.JUDGE`.

    Every attempt passes here, so the refusals are checked here, before anything is written:
    who may submit (`rules.submission_refusal`: SubmissionRefused) and a time the boards cannot
    take (SolveRejected). A hidden programmer's attempts are recorded and kept off the boards by
    `solve_apply`. A competition's own window is checked by `competitions` before it calls this.
    """
    refusal = rules.submission_refusal(programmer=programmer, source=source)
    if refusal:
        raise SubmissionRefused(refusal)
    submitted_at = submitted_at or timezone.now()
    solve_check_time(submitted_at)
    submission = _submission_document(
        programmer, problem, accepted, submitted_at, answer, competitions, source
    )
    submission_id = _submission_insert(submission, key)
    counted = accepted and solve_record(
        programmer=programmer, problem=problem, solved_at=submitted_at, request=key
    )
    if counted:
        mongo.submissions().update_one({"_id": submission_id}, {"$set": {"counted": True}})
    return Verdict(accepted=accepted, counted=counted)


def _submission_document(
    programmer: Programmer,
    problem: Problem,
    accepted: bool,
    submitted_at: dt.datetime,
    answer: str | None,
    competitions: Iterable[str],
    source: str,
) -> dict:
    """An attempt as `submissions` keeps it, not counted yet (the answer and a source other
    than the site only when there is one)."""
    submission = {
        "programmer_id": programmer.pk,
        "handle": programmer.handle,
        "problem": problem.slug,
        "verdict": "accepted" if accepted else "rejected",
        "submitted_at": submitted_at,
        "counted": False,
        "competitions": list(competitions),
    }
    if answer is not None:
        submission["answer"] = answer
    if source != rules.SITE:
        submission["source"] = source
    return submission


def answer_submit(
    *,
    programmer: Programmer,
    problem: Problem,
    answer: str,
    competitions: Iterable[str] = (),
    wrong_per_minute: int | None = None,
    score: int | None = None,
) -> Verdict:
    """Judge an answer sent from a page (the answer form, a competition's problem) and record it.

    Guessing is limited: past `wrong_per_minute` wrong answers to this problem in a minute (the
    site's ANSWER_WRONG_PER_MINUTE unless a competition sets its own) it raises
    `limits.Limited` and records nothing, right answer or not. Each answer takes its place in
    the minute before it is judged (one atomic increment), so answers sent all at once cannot
    pass the limit together; a right answer, or one that is not recorded, gives its place back:
    only wrong answers count. A right answer with a `score` (a scored problem's form) is also
    a scored report for the best-score boards (`score_record`)."""
    taken = limits.limit_take(
        limit=limits.wrong_answers(wrong_per_minute), key=f"{programmer.pk}:{problem.pk}"
    )
    try:
        verdict = submission_record(
            programmer=programmer,
            problem=problem,
            accepted=problem.accepts(answer),
            answer=answer,
            competitions=competitions,
        )
    except BaseException:
        limits.limit_give_back(taken)
        raise
    if verdict.accepted:
        limits.limit_give_back(taken)
        if score is not None and problem.scored:
            score_record(
                programmer=programmer, problem=problem, solved_at=timezone.now(), score=score
            )
    return verdict


def _submission_insert(submission: dict, key: str | None):
    """Insert the attempt and return its id; with a `key`, only the first time that key comes.
    The upsert's filter names the programmer, the collection's shard key on a sharded cluster
    (which must find an upsert's shard from its filter); a key comes with one body, so with one
    programmer (`idempotency`)."""
    if key is None:
        return mongo.submissions().insert_one(submission).inserted_id
    first_time = {"_id": key, "programmer_id": submission["programmer_id"]}
    mongo.submissions().update_one(first_time, {"$setOnInsert": submission}, upsert=True)
    return key


def solve_check_future(solved_at: dt.datetime, now: dt.datetime | None = None) -> None:
    """Refuse a solve in the future (beyond clock skew)."""
    if solved_at > (now or timezone.now()) + CLOCK_SKEW:
        raise SolveRejected("it is in the future.")


def solve_check_time(solved_at: dt.datetime, now: dt.datetime | None = None) -> None:
    """Refuse a solve in the future (beyond clock skew) or older than the boards still change."""
    now = now or timezone.now()
    solve_check_future(solved_at, now)
    oldest = (
        leaderboard.epoch_day(now, settings.LEADERBOARD_TIME_ZONE)
        - settings.LEADERBOARD_MAX_LATE_DAYS
    )
    try:
        day = solve_day(solved_at)
    except OverflowError as error:  # e.g. year 1 with a positive offset
        raise SolveRejected("solved_at is out of range.") from error
    if day < oldest:
        raise SolveRejected(
            f"solved_at is more than {settings.LEADERBOARD_MAX_LATE_DAYS} days ago."
        )


def solve_record(
    *,
    programmer: Programmer,
    problem: Problem,
    solved_at: dt.datetime,
    points: int | None = None,
    request: str | None = None,
) -> bool:
    """Count the first accepted solve of (programmer, problem) on every board at once.

    The solve is a small state machine in the `solves` log: logged (the unique key makes the
    first one win), then counted on each board (idempotent by the solve's id), then applied.
    Whoever meets a logged solve that is not applied yet (a retry after a fault, a second report
    of the same solve, the repair task) finishes it before answering. Returns whether this call,
    or the request `request` it retries, logged the solve first: a repeat counts nothing.

    A solve in a hold window of its problem (a frozen competition's) is logged held, already
    applied and outside its problem's count: it counts when released (see `holds`).
    """
    solve_check_time(solved_at)
    solve = {
        "_id": ObjectId(),  # named before the write: the entries' counts are idempotent by it
        "programmer_id": programmer.pk,
        "problem": problem.slug,
        "points": problem.points if points is None else points,
        "solved_at": solved_at,
        "applied": False,
        "request": request or secrets.token_hex(12),
        "logged_at": timezone.now(),
    }
    if (held_until := holds.held_until(problem=problem.slug, solved_at=solved_at)) is not None:
        solve |= {holds.HELD_UNTIL: held_until, "applied": True}  # nothing to count until then
    elif programmer.on_boards:
        solve |= solvers.move_new(add=True)  # logged with its move into the problem's count
    else:
        solve["applied"] = True  # off the boards: nothing to count
    try:
        solve_apply(solve, programmer, log=True)
    except DuplicateKeyError:
        # Logged before: by another request, or by this one before a fault (or pymongo's own
        # retry of the insert). Either way finish it, then say whose it was.
        logged = mongo.solves().find_one({"programmer_id": programmer.pk, "problem": problem.slug})
        if logged is None:
            raise
        if not logged.get("applied", True):
            solve_apply(logged, programmer)
        return request is not None and logged.get("request") == request
    return True


def solve_report(
    *,
    handle: str,
    problem_slug: str,
    solved_at: dt.datetime,
    points: int | None = None,
    score: int | None = None,
    request: str | None = None,
) -> bool:
    """A judge reports an accepted solve: check its time first (so a refused one registers
    nothing), register an unknown handle or problem, then count it once (`request`: the judge's
    idempotency key, so a retry after a fault is told it counted). With a `score`, the report is
    also logged and counted on the best-score boards (`score_record`): it counted when either
    the solve or the score did."""
    solve_check_time(solved_at)
    programmer = programmer_get_or_register(handle=handle)
    problem = problem_get_or_register(slug=problem_slug)
    counted = solve_record(
        programmer=programmer,
        problem=problem,
        solved_at=solved_at,
        points=points,
        request=request,
    )
    if score is None:
        return counted
    scored = score_record(
        programmer=programmer, problem=problem, solved_at=solved_at, score=score, request=request
    )
    return scored or counted


def score_record(
    *,
    programmer: Programmer,
    problem: Problem,
    solved_at: dt.datetime,
    score: int,
    request: str | None = None,
) -> bool:
    """Log a scored report and count it on the best-score boards, once whatever the retries.

    Unlike a solve, every report is kept (a programmer improves on a problem): the `scores` log
    has one report a request (`request`, the judge's idempotency key; a form's report gets a key
    of its own), so a retry after a fault finds its report logged and finishes it, as a solve's
    does (logged, counted on each board idempotently by the report's id, placed, then applied).
    Returns True: the report is this request's, counted (a worse score changes no board, but it
    is kept, and counts once the better ones leave the window). A report in a hold window of its
    problem (a frozen competition's) is logged held, as a solve is, and counts when released."""
    solve_check_time(solved_at)
    report = {
        "programmer_id": programmer.pk,
        "problem": problem.slug,
        "score": score,
        "solved_at": solved_at,
        "applied": False,
        "request": request or secrets.token_hex(12),
        "logged_at": timezone.now(),
    }
    if (held_until := holds.held_until(problem=problem.slug, solved_at=solved_at)) is not None:
        report |= {holds.HELD_UNTIL: held_until, "applied": True}  # nothing to count until then
    try:
        mongo.scores().insert_one(report)
    except DuplicateKeyError:
        logged = mongo.scores().find_one({"request": report["request"]})
        if logged is None:
            raise
        if not logged.get("applied", True):
            score_apply(logged, programmer)
        return True
    if not holds.is_held(report):
        score_apply(report, programmer)
    return True


def score_apply(report: dict, programmer: Programmer) -> None:
    """Count a logged scored report on every best-score board that takes its problem (each count
    idempotent by the report's id), then bring their orders along; the batch that moves them
    marks the report applied (`orders_moved`)."""
    boards = list(Board.objects.select_related("problem"))
    counting = [board for board in boards if board.counts_problem(report["problem"])]
    if not (programmer.on_boards and counting):
        mongo.scores().update_one({"_id": report["_id"]}, {"$set": {"applied": True}})
        return
    events = [
        entries.SolveEvent(
            solve_id=str(report["_id"]),
            programmer_id=programmer.pk,
            handle=programmer.handle,
            groups=tuple(programmer.group_scopes()),
            day=solve_day(report["solved_at"]),
            value=board.value_of_score(report["score"]),
            at=report["solved_at"],
            problem=report["problem"],
        )
        for board in counting
    ]
    counts = [
        (board.slug, board.spec, event) for board, event in zip(counting, events, strict=True)
    ]
    entries.entries_count_solve(counts, today())  # every board's entry in one command
    applier.orders_catch_up(
        [(board.slug, programmer.pk) for board in counting],
        tag=f"{SCORE_TAG}{report['_id']}",
        boards=_windows(boards),
    )


def solve_apply(solve: dict, programmer: Programmer, *, log: bool = False) -> None:
    """Count a solve on every board (each count is idempotent by the solve's id) and in its
    problem's count (`solvers`), in one command with its entry in the log when `log` (a new
    solve: `DuplicateKeyError` when it was logged before, and then nothing else is written),
    then bring the boards' orders along (all boards at once); the batch that moves them marks
    the solve applied (`orders_moved`). A held solve counts nothing until it is released
    (`holds`), nor does the solve of a programmer off the boards."""
    counted = not holds.is_held(solve) and not solve.get("applied", False)
    every_board = list(Board.objects.all()) if counted and programmer.on_boards else []
    boards = [board for board in every_board if not board.is_best]  # they count `scores`
    counts = [(board.slug, board.spec, _solve_event(solve, programmer, board)) for board in boards]
    log_write = [InsertOne(solve, namespace=mongo.namespace(mongo.solves()))] if log else []
    if counted and not log:
        solvers.move_finish(solve)  # a retry's or the repair's: whichever step it stopped at
    moves = solvers.move_writes(solve) if counted and log else []
    try:
        mongo.write_together([*log_write, *entries.count_writes(counts, today()), *moves])
    except ClientBulkWriteException as error:
        if not mongo.only_duplicates(error):
            raise
        if log and error.write_errors[0].get("idx") == 0:
            raise DuplicateKeyError("the solve was logged before", 11000) from error
        solvers.move_finish(solve)  # the problem's count met a duplicate: done again, carefully
    if not boards:
        if counted:  # a retry of a solve whose programmer left the boards meanwhile
            mongo.solves().update_one({"_id": solve["_id"]}, {"$set": {"applied": True}})
        return
    # The batch that moves them marks the solve applied (`orders_moved`).
    applier.orders_catch_up(
        [(board.slug, programmer.pk) for board in boards],
        tag=_solve_tag(solve["_id"]),
        boards=_windows(every_board),
    )


def _solve_event(solve: dict, programmer: Programmer, board: Board) -> entries.SolveEvent:
    """A logged solve as a board counts it."""
    return entries.SolveEvent(
        solve_id=str(solve["_id"]),
        programmer_id=programmer.pk,
        handle=programmer.handle,
        groups=tuple(programmer.group_scopes()),
        day=solve_day(solve["solved_at"]),
        value=board.value_of(solve["points"]),
        at=solve["solved_at"],
    )


SOLVE_TAG = "solve-"
SCORE_TAG = "score-"


def _windows(boards: Iterable[Board]) -> dict[str, leaderboard.Window]:
    """{board slug: its window}: what the engine needs to keep each board's days (`day_change`)."""
    return {board.slug: board.spec for board in boards}


def _solve_tag(solve_id: ObjectId) -> str:
    return f"{SOLVE_TAG}{solve_id}"


def orders_moved(moved: applier.Moved) -> applier.Finish:
    """Finish the work of every request whose programmers a batch moved, once for the batch and
    before any of them answers (`applier.on_batch_moved`): mark their solves applied in the log,
    and bump the live counters of the boards it moved (live pages see the changes on their next
    poll), written with the batch's own writes. A solve whose orders never moved stays
    unapplied for a retry or the repair task."""
    solve_ids = [ObjectId(t.removeprefix(SOLVE_TAG)) for t in moved.tags if t.startswith(SOLVE_TAG)]
    writes: list = []
    if solve_ids:
        applied = {"_id": {"$in": solve_ids}}, {"$set": {"applied": True}}
        writes.append(UpdateMany(*applied, namespace=mongo.namespace(mongo.solves())))
    score_ids = [ObjectId(t.removeprefix(SCORE_TAG)) for t in moved.tags if t.startswith(SCORE_TAG)]
    if score_ids:
        applied = {"_id": {"$in": score_ids}}, {"$set": {"applied": True}}
        writes.append(UpdateMany(*applied, namespace=mongo.namespace(mongo.scores())))
    boards = sorted(moved.boards)
    writes += live.board_versions_writes(boards)
    return applier.Finish(writes, then=lambda: live.board_versions_forget(boards))


# --- hiding and banning ----------------------------------------------------------------------


def programmer_set_visibility(
    *, programmer: Programmer, hidden: bool | None = None, banned: bool | None = None
) -> Programmer:
    """Hide, ban or restore a programmer (None leaves a flag as it is).

    Leaving the boards empties their entries and takes them out of the orders, so everybody
    below closes up at once; coming back recomputes their entries from the `solves` log. Only this
    programmer moves. Solves keep being logged meanwhile (`solve_apply` skips the boards), so
    nothing is lost either way.
    """
    was_on_boards = programmer.on_boards
    if hidden is not None:
        programmer.hidden = hidden
    if banned is not None:
        programmer.banned = banned
    programmer.save(update_fields=["hidden", "banned"])
    if programmer.on_boards != was_on_boards:
        programmer_refresh_boards(programmer=programmer)
    return programmer


def _solves_of(programmer: Programmer) -> list[dict]:
    """A programmer's solves the boards count (not the held ones)."""
    return list(
        mongo.solves().find(
            {"programmer_id": programmer.pk, **holds.SHOWN}, {"points": 1, "solved_at": 1}
        )
    )


def _scores_of(programmer: Programmer) -> list[dict]:
    """A programmer's scored reports (the log of the best-score boards)."""
    fields = {"problem": 1, "score": 1, "solved_at": 1}
    return list(mongo.scores().find({"programmer_id": programmer.pk, **holds.SHOWN}, fields))


def programmer_refresh_boards(*, programmer: Programmer) -> None:
    """Recompute a programmer's entries on every board from the solves log (the best-score
    boards' from the scores log) and move them in the orders: after a crash left a solve
    unapplied, after their handle or groups changed (entries keep copies of both), or when they
    leave the boards (no entries) or come back."""
    solves = _solves_of(programmer) if programmer.on_boards else []
    scores = _scores_of(programmer) if programmer.on_boards else []
    now_day = today()
    boards = list(Board.objects.select_related("problem"))
    who = _identity(programmer)
    documents = {}
    for board in boards:
        document, ids = _board_entry(
            board, who, solves, scores, now_day, settings.LEADERBOARD_TIME_ZONE
        )
        documents[board.slug] = None if document is None else entries.applied_with(document, ids)
    # Its batch touches every board listed.
    applier.entries_replace(programmer.pk, documents, boards=_windows(boards))
    # The problems' solver counts leave them out (or take them back) the same way.
    solvers.programmer_sync(programmer_id=programmer.pk, counted=programmer.on_boards)


def orders_prune() -> int:
    """Drop every board's orders of days past the history kept (beat runs it every hour: it
    finds nothing to do but once a day, after midnight)."""
    now_day = today()
    return sum(
        orders.orders_prune(board.slug, board.spec, now_day) for board in Board.objects.all()
    )


def solves_repair(*, older_than: dt.timedelta = dt.timedelta(minutes=2)) -> int:
    """Count solves that were logged but never applied (a crash between the log and the boards),
    and finish the order moves a crash left pending on any board.

    Their programmers' entries are recomputed from the log, which is idempotent, so a solve is
    never counted twice however often this runs. Returns how many programmers were repaired.
    """
    pending = {"applied": False, "logged_at": {"$lt": timezone.now() - older_than}}
    programmer_ids = set(mongo.solves().distinct("programmer_id", pending))
    programmer_ids |= set(mongo.scores().distinct("programmer_id", pending))
    for programmer in Programmer.objects.filter(pk__in=programmer_ids):
        programmer_refresh_boards(programmer=programmer)
        mine = {**pending, "programmer_id": programmer.pk}
        for log in (mongo.solves(), mongo.scores()):
            log.update_many(mine, {"$set": {"applied": True}})
    # Whatever a crash left pending, on every board, and the days every board keeps.
    applier.orders_catch_up(boards=_windows(Board.objects.all()))
    solvers.moves_repair(older_than=older_than)  # and in the problems' solver counts
    solves_release()  # and the held solves whose hold is over, if nothing released them yet
    return len(programmer_ids)


def solves_release() -> int:
    """Count the held solves that no window holds any more (see `holds`): the competition ended,
    early or not. Returns how many were released.

    Each programmer's released solves leave the hold (unapplied, so the repair task finishes
    them after a crash), then their entries are recomputed from the log with them (counted on
    their own days, however late) and they join their problems' counts: exactly once, whoever
    else releases them at the same time. A solve still held whose window's end moved (staff
    moved the competition's end) keeps the new end."""
    count = 0
    for log in (mongo.solves(), mongo.scores()):  # the best-score boards' reports are held too
        released = _held_over(log)
        for programmer in Programmer.objects.filter(pk__in=released):
            ids = {"_id": {"$in": released[programmer.pk]}}
            unheld = {"$unset": {holds.HELD_UNTIL: ""}, "$set": {"applied": False}}
            freed = log.update_many({**ids, **holds.HELD}, unheld)
            if freed.modified_count:
                programmer_refresh_boards(programmer=programmer)
                log.update_many({**ids, "applied": False}, {"$set": {"applied": True}})
                count += freed.modified_count
    return count


def _held_over(log: Collection) -> dict[int, list]:
    """{programmer id: ids of their held solves or reports in `log` that no window holds any
    more}; one still held whose window's end moved keeps the new end."""
    fields = {"programmer_id": 1, "problem": 1, "solved_at": 1, holds.HELD_UNTIL: 1}
    held = list(log.find(holds.HELD, fields))
    until = holds.still_held(held) if held else {}
    released: dict[int, list] = defaultdict(list)
    for solve in held:
        end = until.get(solve["_id"])
        if end is None:
            released[solve["programmer_id"]].append(solve["_id"])
        elif end != solve[holds.HELD_UNTIL]:
            moved = {"_id": solve["_id"], **holds.HELD}
            log.update_one(moved, {"$set": {holds.HELD_UNTIL: end}})
    return released


# --- rebuilds --------------------------------------------------------------------------------


def entry_from_solves(
    board: Board, programmer: Programmer, solves: list[dict], now_day: int
) -> dict | None:
    """The entry a board should hold for a programmer, computed from their solves alone."""
    return from_solves.entry_from_solves(
        board.spec,
        board.value_of,
        _identity(programmer),
        solves,
        now_day,
        settings.LEADERBOARD_TIME_ZONE,
    )


def _board_entry(
    board: Board,
    who: from_solves.Identity,
    solves: list[dict],
    scores: list[dict],
    now_day: int,
    time_zone: str,
) -> tuple[dict | None, list[str]]:
    """A board's entry for a programmer from their solves, or on a best-score board from their
    scored reports of the problems it takes (None: off the board), with the ids it counts."""
    if board.is_best:
        counted = [s for s in scores if board.counts_problem(s["problem"])]
        reports = [
            leaderboard.Report(
                s["problem"],
                leaderboard.epoch_day(s["solved_at"], time_zone),
                board.value_of_score(s["score"]),
                s["solved_at"],
            )
            for s in counted
        ]
        document = from_solves.entry_from_reports(board.spec, who, reports, now_day)
    else:
        counted = solves
        document = from_solves.entry_from_solves(
            board.spec, board.value_of, who, solves, now_day, time_zone
        )
    return document, [str(s["_id"]) for s in counted]


def _identity(programmer: Programmer) -> from_solves.Identity:
    """Who a programmer's entries belong to, as the boards show them."""
    return from_solves.Identity(programmer.pk, programmer.handle, tuple(programmer.group_scopes()))


def _log_by_programmer(
    with_scores: bool = False,
) -> Iterator[tuple[Programmer, list[dict], list[dict]]]:
    """Every programmer in id order with all their solves in the log, those off the boards
    (hidden, banned) too: the problems' counts mark each solve counted or not; and their
    scored reports if `with_scores` (for best-score boards), else none.

    Read a range of programmer ids at a time: the embedded server reads the whole of a sorted
    read before its first answer (300,000 solves took 17 s, past the socket timeout long before
    a million programmers), and a range is one walk of the unique key's index. The next range
    is read by a thread while the caller computes with this one."""
    programmers = Programmer.objects.order_by("pk").iterator(chunk_size=rebuild.BATCH)
    chunks = iter(lambda: list(itertools.islice(programmers, rebuild.BATCH)), [])
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="log-read") as reader:
        coming = None
        for chunk in chunks:
            read, coming = coming, reader.submit(_log_range, chunk, with_scores)
            if read is not None:
                yield from read.result()
        if coming is not None:
            yield from coming.result()


def _log_range(
    chunk: list[Programmer], with_scores: bool
) -> list[tuple[Programmer, list[dict], list[dict]]]:
    """These programmers (in id order), each with their solves. Grouped here, not sorted by
    the server: an entry does not depend on the order of its solves, and the embedded server's
    sort is a quarter of the read. Whole solves, not a projection of them: the embedded server
    copies each document it projects, a tenth of its time in an import's entries."""
    by_programmer: dict[int, list[dict]] = defaultdict(list)
    for solve in mongo.solves().find(
        {"programmer_id": {"$gte": chunk[0].pk, "$lte": chunk[-1].pk}}
    ):
        by_programmer[solve["programmer_id"]].append(solve)
    scores: dict[int, list[dict]] = defaultdict(list)
    if with_scores:
        between = {"programmer_id": {"$gte": chunk[0].pk, "$lte": chunk[-1].pk}}
        for report in mongo.scores().find(between):
            scores[report["programmer_id"]].append(report)
    return [(p, by_programmer.get(p.pk, []), scores.get(p.pk, [])) for p in chunk]


def board_rebuild(*, board: Board, dry_run: bool = False) -> rebuild.RebuildReport:
    """Recompute a board's entries and orders from the `solves` log, streamed."""
    return boards_rebuild(boards=[board], dry_run=dry_run)[0]


def boards_rebuild(
    *,
    boards: list[Board],
    dry_run: bool = False,
    progress: rebuild.Progress = rebuild.QUIET,
    stats: solvers.StatsBuild | None = None,
) -> list[rebuild.RebuildReport]:
    """Recompute these boards' entries and orders from the `solves` log, streamed once for all
    of them and for the problems' counts if `stats` is given (`progress` is told of each solve
    read, then of each order written)."""
    now_day, time_zone = today(), settings.LEADERBOARD_TIME_ZONE
    builds = [rebuild.BoardBuild(board.slug, board.spec, now_day, dry_run) for board in boards]
    progress.phase("entries", mongo.solves().estimated_document_count(), "solves")
    with_scores = any(board.is_best for board in boards)
    for programmer, logged, scored in _log_by_programmer(with_scores):
        shown = [solve for solve in logged if not holds.is_held(solve)]
        if stats is not None:
            stats.add(shown, counted=programmer.on_boards)
            if len(shown) < len(logged):  # held solves are in no count until released
                stats.add([s for s in logged if holds.is_held(s)], counted=False)
        # None for those off the boards (hidden, banned): a rebuild removes their entries.
        solves = shown if programmer.on_boards else []
        scores = [r for r in scored if not holds.is_held(r)] if programmer.on_boards else []
        who = _identity(programmer)
        for board, build in zip(boards, builds, strict=True):
            entry, ids = _board_entry(board, who, solves, scores, now_day, time_zone)
            if entry is None:
                build.absent(programmer.pk)
            else:
                build.add(entry, ids)
        progress.advance(len(logged))
    reports = [build.finish(progress) for build in builds]
    if not dry_run:
        boards_touch([board.slug for board in boards])
    return reports


# --- bulk loads ------------------------------------------------------------------------------

DUPLICATE_KEY = 11000


def solves_import(*, solves: Iterable[tuple[Programmer, Problem, dt.datetime]]) -> int:
    """Log many accepted solves at once, then rebuild every board from the `solves` log.

    For bulk loads such as the demo data: one rebuild is a single pass over the log, far cheaper
    than one pipeline update per solve and board when thousands arrive together, and it leaves
    exactly the boards the solves would have left one by one. A repeated (programmer, problem)
    counts once. Returns how many solves were new.
    """
    documents = []
    for programmer, problem, solved_at in solves:
        solve_check_time(solved_at)
        # Marked applied: the rebuild below counts them, so nothing may apply them again.
        documents.append(
            {
                "programmer_id": programmer.pk,
                "problem": problem.slug,
                "points": problem.points,
                "solved_at": solved_at,
                "applied": True,
                "problem_counted": programmer.on_boards,  # so the recount marks none of them
            }
        )
    inserted = len(_inserted(mongo.solves(), documents))
    if inserted:
        boards_rebuild_all()
    return inserted


@contextlib.contextmanager
def solves_bulk_logging(*, progress: rebuild.Progress = rebuild.QUIET) -> Iterator[None]:
    """Around all the batches of an import: into an empty log (a new site) the solves are logged
    without the log's secondary indexes, made again at the end, even after an error (the unique
    key stays: it is what counts a solve once). Each solve then costs the embedded server about
    0.3 ms instead of 0.5, and the three indexes over the whole log take a fraction of that."""
    solves = mongo.solves()
    aside = mongo.indexes_set_aside(solves) if solves.estimated_document_count() == 0 else []
    try:
        yield
    finally:
        if aside:
            progress.phase("the log's indexes")
            mongo.indexes_restore(solves, aside)


@dataclass(frozen=True)
class ImportedSolve:
    """One line of an import, validated like `POST /api/v1/solves`."""

    key: str  # the line's id, as an idempotency key
    body_hash: str
    handle: str
    problem_slug: str
    solved_at: dt.datetime
    points: int | None


@dataclass
class ImportReport:
    imported: int = 0
    present: int = 0
    reused: list[str] = field(default_factory=list)  # ids sent before with another body


class SolvesImport:
    """The batches of one import, logged in turn (`log`, then `finish`): idempotent by id (an id
    seen before is already present; with another body it is refused), unknown handles and
    problems registered, each (programmer, problem) counted once. Boards are not touched:
    `boards_rebuild_all` counts everything in one pass once the whole import is logged. Solves
    are history, so the late limit does not apply.

    Each batch is stored (its solves, then its ids) by a thread while the caller checks the next
    one's ids and registers its programmers: the storing is the server's work, the rest this
    process's, and one after the other each waited for the other. An id of the batch being
    stored is known as claimed before its record is written.

    Each id is recorded (`mongo.import_ids`) once its solve is logged: one write a line, where a
    claim and then its answer took two (the answers alone were a third of an import). A run
    stopped between the two leaves solves without ids; the next run logs them again, which the
    unique (programmer, problem) key turns into "already present"."""

    def __init__(self) -> None:
        self._storing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-store")
        self._stored: Future | None = None
        self._in_flight: dict[str, str] = {}  # {id: body hash} of the batch being stored

    def log(self, solves: list[ImportedSolve]) -> ImportReport:
        """Check a batch and hand it to be stored. Returns the report of the batch stored before
        it (an empty one at first): a batch's report is known once it is stored."""
        report = ImportReport()
        fresh = _import_unclaimed(solves, report, self._in_flight)
        programmers = _programmers_registered([s.handle for s in fresh])
        problems = {p.slug: p for p in _problems_registered({s.problem_slug for s in fresh})}
        documents = [
            _imported_solve_document(
                solve, programmers[solve.handle.lower()], problems[solve.problem_slug]
            )
            for solve in fresh
        ]
        before = self._wait()
        self._in_flight = {s.key: s.body_hash for s in fresh}
        self._stored = self._storing.submit(_import_store, fresh, documents, report)
        return before

    def finish(self) -> ImportReport:
        """Wait for the last batch; returns its report."""
        try:
            return self._wait()
        finally:
            self._storing.shutdown()

    def _wait(self) -> ImportReport:
        if self._stored is None:
            return ImportReport()
        stored, self._stored = self._stored, None
        return stored.result()


def _import_store(
    fresh: list[ImportedSolve], documents: list[dict], report: ImportReport
) -> ImportReport:
    """Log a batch's new solves, then record their ids."""
    inserted = _inserted(mongo.solves(), documents)
    report.imported = len(inserted)
    report.present += len(fresh) - report.imported
    _import_ids_store(fresh, inserted)
    return report


def _imported_solve_document(
    solve: ImportedSolve, programmer: Programmer, problem: Problem
) -> dict:
    return {
        "programmer_id": programmer.pk,
        "problem": problem.slug,
        "points": problem.points if solve.points is None else solve.points,
        "solved_at": solve.solved_at,
        "applied": True,  # counted by the rebuild that follows the import
        "problem_counted": programmer.on_boards,  # as the recount after it would mark it
        "request": solve.key,
        "logged_at": timezone.now(),
    }


def _import_ids_store(solves: list[ImportedSolve], inserted: set[int]) -> None:
    """Record the ids of logged lines, with whether each counted. One that another import
    recorded meanwhile stays as it is."""
    now = timezone.now()
    ids = [
        {"_id": s.key, "body_hash": s.body_hash, "counted": i in inserted, "imported_at": now}
        for i, s in enumerate(solves)
    ]
    _inserted(mongo.import_ids(), ids)


def _inserted(collection, documents: list[dict]) -> set[int]:
    """Insert documents, skipping those a unique key refuses. Returns the indexes of new ones."""
    if not documents:
        return set()
    try:
        collection.insert_many(documents, ordered=False)
    except BulkWriteError as error:
        if any(e["code"] != DUPLICATE_KEY for e in error.details["writeErrors"]):
            raise
        return set(range(len(documents))) - {e["index"] for e in error.details["writeErrors"]}
    return set(range(len(documents)))


def _import_unclaimed(
    solves: list[ImportedSolve], report: ImportReport, in_flight: dict[str, str]
) -> list[ImportedSolve]:
    """The lines whose id is new (the first of a batch that repeats one); an id imported before,
    being stored (`in_flight`, {id: body hash}) or earlier in the batch, is already present (the
    same body) or refused (another body)."""
    keys = list({s.key for s in solves})
    claimed = {
        doc["_id"]: doc["body_hash"]
        for doc in mongo.find_by_ids(mongo.import_ids(), keys, {"body_hash": 1})
    }
    claimed |= {key: in_flight[key] for key in keys if key in in_flight}
    fresh = []
    for solve in solves:
        if solve.key not in claimed:
            claimed[solve.key] = solve.body_hash
            fresh.append(solve)
        elif claimed[solve.key] == solve.body_hash:
            report.present += 1
        else:
            report.reused.append(solve.key)
    return fresh


def _programmers_registered(handles: list[str]) -> dict[str, Programmer]:
    """{handle in lower case: programmer} for these handles, registering the unknown ones (the
    first spelling seen wins, as on the API)."""
    lowered: dict[str, str] = {}
    for handle in handles:
        lowered.setdefault(handle.lower(), handle)

    def found() -> dict[str, Programmer]:
        known = {}
        names = list(lowered)
        for start in range(0, len(names), 500):
            query = Programmer.objects.handles_in(names[start : start + 500])
            known |= {p.handle.lower(): p for p in query}
        return known

    known = found()
    missing = [Programmer(handle=lowered[h]) for h in lowered if h not in known]
    if not missing:
        return known
    Programmer.objects.bulk_create(missing, batch_size=500, ignore_conflicts=True)
    return found()


def _problems_registered(slugs: set[str]) -> list[Problem]:
    existing = set(Problem.objects.filter(slug__in=slugs).values_list("slug", flat=True))
    Problem.objects.bulk_create(
        [Problem(slug=s, title=s, published=False) for s in slugs - existing],
        batch_size=500,
        ignore_conflicts=True,
    )
    return list(Problem.objects.filter(slug__in=slugs))


def boards_rebuild_all(
    *, progress: rebuild.Progress = rebuild.QUIET
) -> list[rebuild.RebuildReport]:
    """Rebuild every board and the problems' solver counts from the `solves` log (after a bulk
    load, or a restore), in one pass over it."""
    stats = solvers.StatsBuild()
    reports = boards_rebuild(boards=list(Board.objects.all()), progress=progress, stats=stats)
    progress.phase("problems' solver counts")
    stats.finish()
    return reports

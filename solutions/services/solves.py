"""Solves and scored reports: the times the boards take, the logs, and the count on every board.

A solve is a small state machine in the `solves` log: logged (its unique (programmer, problem)
key makes the first report win), counted on each board (idempotent by the solve's id), then
applied, marked by the batch that moves the boards' orders (`applied.orders_moved`, the finisher
each request hands to the engine, written with the batch before any of its requests answers).
Whoever meets a logged solve that is not applied yet (a retry after a fault, a second report of
it, the repair task) finishes it first. A scored report goes the same way through the `scores`
log, one report a request. A solve or report in a hold window of its problem is logged held and
counts when released (`holds`).
"""

from __future__ import annotations

import datetime as dt
import secrets

from bson import ObjectId
from django.conf import settings
from django.utils import timezone
from pymongo import InsertOne
from pymongo.errors import ClientBulkWriteException, DuplicateKeyError

from .. import holds, leaderboard, mongo, solvers
from ..clock import today
from ..models import Board, Problem, Programmer
from .applied import orders_moved, score_tag, solve_tag
from .programmers import problem_get_or_register, programmer_get_or_register
from .rebuilds import board_windows

# A judge's clock may run this far ahead of ours.
CLOCK_SKEW = dt.timedelta(minutes=5)


class SolveRejected(ValueError):
    """A solve whose time the boards cannot take (in the future, or too late)."""


def solve_day(solved_at: dt.datetime) -> int:
    return leaderboard.epoch_day(solved_at, settings.LEADERBOARD_TIME_ZONE)


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
    solve = _solve_document(programmer, problem, solved_at, points, request)
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


def _solve_document(
    programmer: Programmer,
    problem: Problem,
    solved_at: dt.datetime,
    points: int | None,
    request: str | None,
) -> dict:
    """A new solve as the log keeps it: not applied yet, with its move into its problem's count,
    or already applied when there is nothing to count (held, or its programmer off the boards)."""
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
    return solve


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
    report = _score_document(programmer, problem, solved_at, score, request)
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


def _score_document(
    programmer: Programmer,
    problem: Problem,
    solved_at: dt.datetime,
    score: int,
    request: str | None,
) -> dict:
    """A new scored report as the log keeps it: not applied yet, or already applied when held."""
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
    return report


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
        leaderboard.SolveEvent(
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
    leaderboard.solve_count(counts, today())  # every board's entry in one command
    leaderboard.pending_place(
        [(board.slug, programmer.pk) for board in counting],
        tag=score_tag(report["_id"]),
        boards=board_windows(boards),
        finish=orders_moved,
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
        mongo.write_together([*log_write, *leaderboard.solve_count_writes(counts, today()), *moves])
    except ClientBulkWriteException as error:
        if not mongo.only_duplicates(error):
            raise
        if log and error.write_errors[0].get("idx") == 0:
            raise DuplicateKeyError("the solve was logged before", mongo.DUPLICATE_KEY) from error
        solvers.move_finish(solve)  # the problem's count met a duplicate: done again, carefully
    if not boards:
        if counted:  # a retry of a solve whose programmer left the boards meanwhile
            mongo.solves().update_one({"_id": solve["_id"]}, {"$set": {"applied": True}})
        return
    # The batch that moves them marks the solve applied (`orders_moved`).
    leaderboard.pending_place(
        [(board.slug, programmer.pk) for board in boards],
        tag=solve_tag(solve["_id"]),
        boards=board_windows(every_board),
        finish=orders_moved,
    )


def _solve_event(solve: dict, programmer: Programmer, board: Board) -> leaderboard.SolveEvent:
    """A logged solve as a board counts it."""
    return leaderboard.SolveEvent(
        solve_id=str(solve["_id"]),
        programmer_id=programmer.pk,
        handle=programmer.handle,
        groups=tuple(programmer.group_scopes()),
        day=solve_day(solve["solved_at"]),
        value=board.value_of(solve["points"]),
        at=solve["solved_at"],
    )

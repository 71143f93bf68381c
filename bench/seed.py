"""The server the bench measures, the scratch database, and the boards it seeds.

Why a module of its own: every size starts the same way, on a database nobody else uses
(``<MONGODB_DB>_bench``, dropped afterwards), with the boards built in bulk as an import builds
them, and the in-process and HTTP measures then read the same seeded boards.

The server is ``--uri``, else MONGODB_URI when it answers; otherwise a throwaway embedded server
(SecantusDB's ``secantusd-py``, its data in a scratch directory) is started for the run, and its
process is known (for its CPU, see `cpu`).

The seeded solves are logged too (in `solves`, as an import logs them): a new day's orders are
made from the day before by moving the programmers who solved on the day leaving the window,
found in the log (`new_day`). Only the days those rows read are logged (and every solve of the
programmer measured, whose profile reads them): at a million the whole log is seven million
documents, written at some 1,700 a second, which no row reads. Without a best-score board among
the site's, the bench measures one of its own (`best_board`), seeded from scored reports logged
in `scores`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import random
import tempfile
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.management.base import CommandError
from django.utils import timezone
from pymongo import MongoClient

from solutions import leaderboard, mongo, selectors, services, solvers
from solutions.models import Board, Programmer
from tools import embedded_mongo

from .counting import CommandCounter

COUNTRIES = ["BD", "IN", "NP", "PK", "LK", ""]
ORGANIZATION_SIZE = 20  # programmers of one organization, on average
# Seeded programmers are not saved in SQL (or only for the while, see `web`): their ids start far
# above any the database gives, so the programmers `--ingest` registers never land on a seeded
# programmer's entries.
SEED_IDS = 10**12
SOLVED_BY_ALL = "bench-solved"  # a problem every seeded programmer solved, for its solvers' pages
BEST_BOARD = "bench-best-scores"  # the bench's own best-score board, when the site has none
SCORE_PROBLEMS = 3  # the scored problems each programmer of the best-score board reported on


@dataclass(frozen=True)
class Server:
    """The MongoDB server measured: its URI, and its process when known (for its CPU)."""

    uri: str
    pid: int | None


@dataclass(frozen=True)
class Seeded:
    """The programmers seeded, and the one in the middle of the measured board, whose reads and
    solves are measured (`programmer_in_the_middle`)."""

    programmers: list[Programmer]
    middle: Programmer


@contextlib.contextmanager
def mongodb_server(uri: str | None, pid: int | None = None) -> Iterator[Server]:
    """The server to measure: `uri` (its process `pid`, if given), else MONGODB_URI if it
    answers (its process unknown), else an embedded one started for the run."""
    if uri:
        if not embedded_mongo.answers(uri, timeout_ms=1500):
            raise CommandError(f"No MongoDB server answers at {uri}.")
        yield Server(uri, pid)
        return
    if embedded_mongo.answers(settings.MONGODB_URI, timeout_ms=1500):
        yield Server(settings.MONGODB_URI, pid)
        return
    # On disk, in a scratch directory: the in-memory storage is capped by the server's cache and
    # fails with InternalError somewhere past ten thousand programmers.
    with tempfile.TemporaryDirectory(prefix="bench-mongo-") as storage:
        try:
            server = embedded_mongo.EmbeddedServer(storage=storage)
        except RuntimeError as error:
            message = f"No MongoDB answers and the embedded one did not start: {error}"
            raise CommandError(message) from error
        with server:
            yield Server(server.uri, server.process.pid)


@contextlib.contextmanager
def best_board(boards: list[Board]) -> Iterator[list[Board]]:
    """The boards to measure: the site's, and a best-score board of the bench's own (the last
    7 days' sum of best scores, saved in SQL while the block runs) when the site has none."""
    boards = [board for board in boards if board.slug != BEST_BOARD]  # one a killed run left
    if any(board.is_best for board in boards):
        Board.objects.filter(slug=BEST_BOARD).delete()
        yield boards
        return
    board, _ = Board.objects.get_or_create(
        slug=BEST_BOARD,
        defaults={
            "title": "Best scores (bench)",
            "window": "rolling",
            "window_days": 7,
            "metric": Board.BEST,
            "position": 99,
        },
    )
    try:
        yield [*boards, board]
    finally:
        board.delete()


@contextlib.contextmanager
def scratch_database(uri: str, counter: CommandCounter) -> Iterator[None]:
    """Point the app at `<MONGODB_DB>_bench` through a counting client; drop it afterwards."""
    real_name = settings.MONGODB_DB
    scratch = f"{real_name}_bench"
    client = MongoClient(uri, tz_aware=True, event_listeners=[counter])
    client.drop_database(scratch)
    settings.MONGODB_DB = scratch
    mongo.set_client(client)
    try:
        yield
    finally:
        client.drop_database(scratch)
        mongo.set_client(None)
        settings.MONGODB_DB = real_name
        client.close()


def _today_so_far() -> tuple[dt.datetime, dt.timedelta]:
    """The start of today in the leaderboard time zone, and how much of today has passed."""
    now = timezone.now()
    zone = ZoneInfo(settings.LEADERBOARD_TIME_ZONE)
    midnight = dt.datetime.combine(now.astimezone(zone).date(), dt.time(), tzinfo=zone)
    return midnight, now - midnight


def _solvers_seed(programmers: list[Programmer], solves: dict[int, list[dict]]) -> None:
    """Everybody solved SOLVED_BY_ALL at one of their solves' times (over the last 10 days):
    its count, day indexes and minute chunks, as a rebuild from the log writes them."""
    stats = solvers.StatsBuild()
    for programmer in programmers:
        solve = solves[programmer.pk][-1]
        stats.add(
            [
                {
                    "_id": solve["_id"],
                    "problem": SOLVED_BY_ALL,
                    "programmer_id": programmer.pk,
                    "solved_at": solve["solved_at"],
                    "problem_counted": True,
                }
            ],
            counted=True,
        )
    stats.finish()


def bench_seed(
    *,
    boards: list[Board],
    measured: Board,
    size: int,
    rng: random.Random,
    log_days: Collection[int] | None = None,
) -> Seeded:
    """`size` programmers with 1 to 8 solves over the last 10 days (one today, so everybody is on
    every board), in an organization of about ORGANIZATION_SIZE and most in a country, built in
    bulk like an import: entries streamed from their solves, then every order sorted and cut
    into sets. Programmers are not saved in SQL (their ids from SEED_IDS): the reads and writes
    measured in process only use their id, handle and groups. The logs hold the solves and
    reports of `log_days` (all days when None) and every one of the programmer in the middle of
    `measured`."""
    midnight, elapsed = _today_so_far()
    now_day = services.solve_day(midnight)
    programmers = _programmers_made(size, rng)
    solves = _solves_made(programmers, rng, midnight=midnight, elapsed=elapsed)
    scores = _scores_of(solves, rng) if any(board.is_best for board in boards) else {}
    for board in boards:
        computed = (
            _entry_of(board, programmer, solves[programmer.pk], scores, now_day)
            for programmer in programmers
        )
        leaderboard.board_rebuild(board.slug, board.spec, computed, now_day, dry_run=False)
    _solvers_seed(programmers, solves)
    middle = programmer_in_the_middle(board=measured, programmers=programmers)
    _logs_write(solves, scores, _logged_of(log_days, middle))
    # Measured on a server that has written the seed out (`fsync`: a checkpoint), so that the
    # writing of gigabytes at a million does not fall inside the first measures.
    mongo.get_db().client.admin.command("fsync")
    return Seeded(programmers, middle)


def _programmers_made(size: int, rng: random.Random) -> list[Programmer]:
    """`size` programmers (ids from SEED_IDS), most in a country, in organizations of about
    ORGANIZATION_SIZE."""
    organizations = max(1, size // ORGANIZATION_SIZE)
    return [
        Programmer(
            pk=SEED_IDS + n,
            handle=f"bench{n:07d}",
            country=rng.choice(COUNTRIES),
            organization=f"Org {n % organizations}",
        )
        for n in range(size)
    ]


def _solves_made(
    programmers: list[Programmer],
    rng: random.Random,
    *,
    midnight: dt.datetime,
    elapsed: dt.timedelta,
) -> dict[int, list[dict]]:
    """{programmer id: their solves}: one today, then up to 7 more over the last 10 days."""
    return {
        programmer.pk: [
            {
                "_id": f"{programmer.pk}-{n}",
                "points": rng.choice([10, 20, 50, 100]),
                # Inside the day `age` days ago, at a time of day today has reached: the same
                # days, hence the same boards, whenever the bench runs.
                "solved_at": midnight - dt.timedelta(days=age) + rng.random() * elapsed,
            }
            for n, age in enumerate([0] + [rng.randrange(10) for _ in range(rng.randrange(8))])
        ]
        for programmer in programmers
    }


def _scores_of(solves: dict[int, list[dict]], rng: random.Random) -> dict[int, list[dict]]:
    """Each programmer's scored reports: one (0 to 1,000) at each of their first
    SCORE_PROBLEMS solves' times, on a problem of its own."""
    return {
        pid: [
            {
                "_id": f"{solve['_id']}-score",
                "problem": f"bench-scored-{n}",
                "score": rng.randrange(1001),
                "solved_at": solve["solved_at"],
            }
            for n, solve in enumerate(theirs[:SCORE_PROBLEMS])
        ]
        for pid, theirs in solves.items()
    }


def _entry_of(
    board: Board,
    programmer: Programmer,
    solves: list[dict],
    scores: dict[int, list[dict]],
    now_day: int,
) -> tuple[dict | None, list[str]]:
    """A board's entry for a seeded programmer and the ids it counts: from their solves, or on
    a best-score board from their scored reports."""
    if not board.is_best:
        entry = services.entry_from_solves(board, programmer, solves, now_day)
        return entry, [s["_id"] for s in solves]
    reports = [
        leaderboard.Report(
            s["problem"],
            services.solve_day(s["solved_at"]),
            board.value_of_score(s["score"]),
            s["solved_at"],
        )
        for s in scores[programmer.pk]
    ]
    who = leaderboard.Identity(programmer.pk, programmer.handle, tuple(programmer.group_scopes()))
    entry = leaderboard.entry_from_reports(board.spec, who, reports, now_day)
    return entry, [s["_id"] for s in scores[programmer.pk]]


def _logged_of(log_days: Collection[int] | None, middle: Programmer) -> Callable[[int, dict], bool]:
    """Whether the logs hold a programmer's solve or report: every one of `middle`'s, and the
    others' on `log_days` (all when None)."""

    def logged(pid: int, solve: dict) -> bool:
        if log_days is None or pid == middle.pk:
            return True
        return services.solve_day(solve["solved_at"]) in log_days

    return logged


def _logs_write(
    solves: dict[int, list[dict]],
    scores: dict[int, list[dict]],
    logged: Callable[[int, dict], bool],
) -> None:
    """The seeded solves in the `solves` log and the reports in `scores`, applied, as an import
    leaves them (the last solve of each is SOLVED_BY_ALL, in its count; the others are in none):
    those `logged` (by the programmer's id and the solve or report)."""
    logged_at = timezone.now()
    batch: list[dict] = []
    for pid, theirs in solves.items():
        for n, solve in enumerate(theirs):
            if not logged(pid, solve):
                continue
            last = n == len(theirs) - 1
            batch.append(
                {
                    **solve,
                    "programmer_id": pid,
                    "problem": SOLVED_BY_ALL if last else f"bench-seed-{n}",
                    "applied": True,
                    "problem_counted": last,
                    "request": solve["_id"],
                    "logged_at": logged_at,
                }
            )
        if len(batch) >= 10_000:
            mongo.solves().insert_many(batch, ordered=False)
            batch = []
    if batch:
        mongo.solves().insert_many(batch, ordered=False)
    reports = [
        {**report, "programmer_id": pid, "applied": True, "request": report["_id"]}
        | {"logged_at": logged_at}
        for pid, theirs in scores.items()
        for report in theirs
        if logged(pid, report)
    ]
    for start in range(0, len(reports), 10_000):
        mongo.scores().insert_many(reports[start : start + 10_000], ordered=False)


def programmer_in_the_middle(*, board: Board, programmers: list[Programmer]) -> Programmer:
    """The programmer ranked in the middle of `board` today, or just below, who is in a country
    (and, as everybody, an organization): the one whose neighbours, rank and solves the bench
    measures, neither at the top nor at the bottom of anything, and whose solves move the same
    orders at every size (a programmer in no country moves a third fewer)."""
    total = selectors.board_page(board=board, page=1).total
    page = max(1, math.ceil((total // 2 + 1) / selectors.PAGE_SIZE))
    by_id = {programmer.pk: programmer for programmer in programmers}
    listed = [by_id[row.programmer_id] for row in selectors.board_page(board=board, page=page).rows]
    return next((programmer for programmer in listed if programmer.country), listed[0])

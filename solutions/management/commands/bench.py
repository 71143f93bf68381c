"""Measure what the common reads and writes cost as a board grows.

Why it exists: the design promises that a rank lookup, the top page and a solve cost the same
at a thousand programmers as at millions (rank data and cached top pages, not counting). This
command shows it: for each size it seeds a scratch database (``<MONGODB_DB>_bench``, dropped
afterwards) with that many programmers on every board, then times each operation and counts the
MongoDB commands it issues, through pymongo's command monitoring.

The server is ``--uri``, else MONGODB_URI when it answers; otherwise a throwaway embedded server
(SecantusDB's ``secantusd-py``, in memory) is started for the run. Seeding writes entry documents
directly (computed as a rebuild would) rather than replaying solves, so 50,000 programmers take
minutes, not hours. Times on the embedded server are only indicative; command counts are exact.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from pymongo import MongoClient, UpdateOne, monitoring

from solutions import mongo, selectors, services
from solutions.leaderboard import rebuild, store
from solutions.models import Board, Problem, Programmer
from tools import embedded_mongo

SEED_BATCH = 2_000
COUNTRIES = ["BD", "IN", "NP", "PK", "LK", ""]


class CommandCounter(monitoring.CommandListener):
    """Counts the commands a client sends (pymongo calls it for every command it starts)."""

    def __init__(self) -> None:
        self.names: Counter[str] = Counter()

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.names[event.command_name] += 1

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass

    @property
    def total(self) -> int:
        return sum(self.names.values())


@dataclass(frozen=True)
class Measure:
    programmers: int
    operation: str
    commands: int
    detail: str  # the commands by name, e.g. "find×2"
    milliseconds: float  # the median of the repetitions


@contextlib.contextmanager
def mongodb_server(uri: str | None) -> Iterator[str]:
    """The server to measure: `uri`, else MONGODB_URI if it answers, else an embedded one."""
    if uri:
        if not embedded_mongo.answers(uri, timeout_ms=1500):
            raise CommandError(f"No MongoDB server answers at {uri}.")
        yield uri
        return
    if embedded_mongo.answers(settings.MONGODB_URI, timeout_ms=1500):
        yield settings.MONGODB_URI
        return
    try:
        server = embedded_mongo.EmbeddedServer()
    except RuntimeError as error:
        message = f"No MongoDB answers and the embedded one did not start: {error}"
        raise CommandError(message) from error
    with server:
        yield server.uri


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


def bench_seed(*, boards: list[Board], size: int, rng: random.Random) -> list[Programmer]:
    """`size` programmers with 1 to 8 solves over the last 10 days (one today, so everybody is on
    every board), written straight as entries and rank data. Programmers are not saved in SQL:
    the reads and writes measured here only use their id, handle and groups."""
    now = timezone.now()
    now_day = services.today()
    programmers = [
        Programmer(pk=n + 1, handle=f"bench{n:06d}", country=rng.choice(COUNTRIES))
        for n in range(size)
    ]
    for board in boards:
        documents = []
        for programmer in programmers:
            ages = [0] + [rng.randrange(10) for _ in range(rng.randrange(8))]
            solves = [
                {
                    "points": rng.choice([10, 20, 50, 100]),
                    "solved_at": now - dt.timedelta(days=age, seconds=rng.randrange(36_000)),
                }
                for age in ages
            ]
            documents.append(services.entry_from_solves(board, programmer, solves, now_day))
        collection = store.entries(board.slug)
        for start in range(0, len(documents), SEED_BATCH):
            collection.insert_many(documents[start : start + SEED_BATCH], ordered=False)
        histograms = rebuild.histograms_from_entries(board.slug, documents)
        store.histograms().bulk_write(
            [UpdateOne({"_id": _id}, {"$set": doc}, upsert=True) for _id, doc in histograms.items()]
        )
    return programmers


def _measure(
    counter: CommandCounter, operation: Callable[[int], object], repeat: int
) -> tuple[Counter[str], float]:
    """Run once to warm up (it may build a cached top page), then `repeat` times: the commands
    of the last run and the median time."""
    operation(-1)
    times, names = [], Counter()
    for attempt in range(repeat):
        counter.names.clear()
        started = time.perf_counter()
        operation(attempt)
        times.append((time.perf_counter() - started) * 1000)
        names = counter.names.copy()
    return names, statistics.median(times)


def bench_operations(
    *, board: Board, boards: list[Board], programmer: Programmer
) -> dict[str, Callable[[int], object]]:
    """The operations to measure, for a programmer in the middle of the board."""
    standing = selectors.programmer_standing(board=board, programmer=programmer)
    deep_page = max(1, standing.total // selectors.PAGE_SIZE // 2)

    def solve(attempt: int) -> None:
        problem = Problem(slug=f"bench-{attempt + 1}", points=50)  # a new problem every time
        services.solve_record(programmer=programmer, problem=problem, solved_at=timezone.now())

    return {
        "rank lookup": lambda _: selectors.programmer_standing(board=board, programmer=programmer),
        "board page 1": lambda _: selectors.board_page(board=board, page=1),
        f"deep page ({deep_page:,})": lambda _: selectors.board_page(board=board, page=deep_page),
        "around me (4)": lambda _: selectors.programmer_neighbours(
            board=board, standing=standing, around=4
        ),
        f"solve ({len(boards)} boards)": solve,
    }


def bench_run(
    *, uri: str, sizes: list[int], repeat: int = 5, report: Callable[[str], None] = print
) -> list[Measure]:
    """Seed each size in turn and measure the five operations on the default board."""
    boards = list(Board.objects.all())
    board = selectors.board_default()
    if board is None:
        raise CommandError("There are no boards to measure.")
    counter = CommandCounter()
    results = []
    for size in sizes:
        with scratch_database(uri, counter):
            mongo.ensure_indexes([b.slug for b in boards])
            started = time.perf_counter()
            programmers = bench_seed(boards=boards, size=size, rng=random.Random(size))
            report(f"Seeded {size:,} programmers in {time.perf_counter() - started:.1f} s.")
            operations = bench_operations(
                board=board, boards=boards, programmer=programmers[size // 2]
            )
            for name, operation in operations.items():
                names, milliseconds = _measure(counter, operation, repeat)
                detail = ", ".join(f"{command}×{n}" for command, n in sorted(names.items()))
                results.append(Measure(size, name, sum(names.values()), detail, milliseconds))
    return results


class Command(BaseCommand):
    help = "Time the common operations and count their MongoDB commands at several board sizes."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--programmers",
            default="1000,50000",
            help="Comma-separated board sizes to measure (default: 1000,50000).",
        )
        parser.add_argument("--uri", help="The MongoDB server (default: MONGODB_URI or embedded).")
        parser.add_argument("--repeat", type=int, default=5, help="Timed runs per operation.")

    def handle(self, *args, programmers: str, uri: str | None, repeat: int, **options) -> None:
        try:
            sizes = [int(size.replace("_", "")) for size in programmers.split(",")]
        except ValueError as error:
            raise CommandError("--programmers takes sizes like 1000,50000.") from error
        if not sizes or min(sizes) < 10 or repeat < 1:
            raise CommandError("Sizes start at 10 programmers, and --repeat at 1.")
        with mongodb_server(uri) as server:
            self.stdout.write(
                f"Measuring on {server} (scratch database {settings.MONGODB_DB}_bench)"
            )
            results = bench_run(
                uri=server,
                sizes=sizes,
                repeat=repeat,
                report=lambda line: self.stdout.write(self.style.NOTICE(line)),
            )
        self.stdout.write("")
        self.stdout.write(
            self.style.MIGRATE_HEADING(
                f"{'programmers':>12}  {'operation':<22}{'commands':>9}{'ms':>10}  commands by name"
            )
        )
        for result in results:
            self.stdout.write(
                f"{result.programmers:>12,}  {result.operation:<22}{result.commands:>9}"
                f"{result.milliseconds:>10.1f}  {result.detail}"
            )
        by_operation: dict[str, set[int]] = {}
        for result in results:
            by_operation.setdefault(result.operation.split(" (")[0], set()).add(result.commands)
        steady = [name for name, counts in by_operation.items() if len(counts) == 1]
        self.stdout.write(
            self.style.SUCCESS(f"Same number of commands at every size: {', '.join(steady)}.")
        )

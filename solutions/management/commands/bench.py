"""Measure what the common reads and writes cost as a board grows.

Why it exists: the design promises that every board read and every solve costs the same at a
thousand programmers as at a million (orders read and written by `_id`, see
`solutions/leaderboard/store.py`). This command shows it: for each size it seeds a scratch database
(``<MONGODB_DB>_bench``, dropped afterwards) with that many programmers on every board, through the
bulk build that `import_solves` and `rebuild_boards` use, then runs each operation `--repeat`
times and prints the MongoDB commands it sends (pymongo's command monitoring: exact, whatever the
machine's noise) and its median and 95th-percentile time. With `--ingest N` it also starts the
web server on the scratch database and posts N solves through the HTTP API from 8 clients at
once; with `--redis URL` it runs the same reads and forward-dated solves on Redis sorted sets
beside it, so the ratio shows.

The server is ``--uri``, else MONGODB_URI when it answers; otherwise a throwaway embedded server
(SecantusDB's ``secantusd-py``, its data in a scratch directory) is started for the run.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from pymongo import MongoClient, monitoring

from solutions import mongo, selectors, services, tokens
from solutions.leaderboard import rebuild
from solutions.models import Board, Problem, Programmer
from tools import embedded_mongo

COUNTRIES = ["BD", "IN", "NP", "PK", "LK", ""]
ORGANIZATION_SIZE = 20  # programmers of one organization, on average
INGEST_CLIENTS = 8
# Seeded programmers are not saved in SQL: their ids start far above any the database gives, so
# the programmers `--ingest` registers never land on a seeded programmer's entries.
SEED_IDS = 10**12


# The parts of a sent command that `explain` must not repeat (the driver adds them to each).
SESSION_FIELDS = {"lsid", "txnNumber", "readConcern", "writeConcern", "$db", "$clusterTime"}


class CommandCounter(monitoring.CommandListener):
    """Counts the commands a client sends (pymongo calls it for every command it starts), and
    keeps the finds, so that the server can say how many documents they examined."""

    def __init__(self) -> None:
        self.names: Counter[str] = Counter()
        self.finds: list[tuple[str, dict]] = []

    def clear(self) -> None:
        self.names.clear()
        self.finds.clear()

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.names[event.command_name] += 1
        if event.command_name == "find":
            command = {k: v for k, v in event.command.items() if k not in SESSION_FIELDS}
            self.finds.append((event.database_name, command))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


@dataclass(frozen=True)
class Measure:
    programmers: int
    operation: str
    commands: int
    detail: str  # the commands by name, e.g. "find×2"
    median: float  # milliseconds
    p95: float
    redis: float | None = None  # the same operation on Redis sorted sets, median milliseconds
    examined: int | None = None  # documents the finds examined (the server's explain)


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
    # On disk, in a scratch directory: the in-memory storage is capped by the server's cache and
    # fails with InternalError somewhere past ten thousand programmers.
    with tempfile.TemporaryDirectory(prefix="bench-mongo-") as storage:
        try:
            server = embedded_mongo.EmbeddedServer(storage=storage)
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
    every board), in an organization of about ORGANIZATION_SIZE and most in a country, built in
    bulk like an import: entries streamed from their solves, then every order sorted and cut
    into sets. Programmers are not saved in SQL (their ids from SEED_IDS): the reads and writes
    measured here only use their id, handle and groups."""
    now, now_day = timezone.now(), services.today()
    organizations = max(1, size // ORGANIZATION_SIZE)
    programmers = [
        Programmer(
            pk=SEED_IDS + n,
            handle=f"bench{n:07d}",
            country=rng.choice(COUNTRIES),
            organization=f"Org {n % organizations}",
        )
        for n in range(size)
    ]
    solves = {
        programmer.pk: [
            {
                "_id": f"{programmer.pk}-{n}",
                "points": rng.choice([10, 20, 50, 100]),
                "solved_at": now - dt.timedelta(days=age, seconds=rng.randrange(36_000)),
            }
            for n, age in enumerate([0] + [rng.randrange(10) for _ in range(rng.randrange(8))])
        ]
        for programmer in programmers
    }
    for board in boards:
        computed = (
            (
                services.entry_from_solves(board, programmer, solves[programmer.pk], now_day),
                [s["_id"] for s in solves[programmer.pk]],
            )
            for programmer in programmers
        )
        rebuild.board_rebuild(board.slug, computed, now_day, dry_run=False)
    return programmers


def _measure(
    counter: CommandCounter, operation: Callable[[int], object], repeat: int
) -> tuple[Counter[str], float, float, int | None]:
    """Run once to warm up, then `repeat` times: the commands of the last run, the median and
    95th percentile of the times, and the documents the last run's finds examined."""
    operation(-1)
    times, names, finds = [], Counter(), []
    for attempt in range(repeat):
        counter.clear()
        started = time.perf_counter()
        operation(attempt)
        times.append((time.perf_counter() - started) * 1000)
        names, finds = counter.names.copy(), list(counter.finds)
    times.sort()
    return (
        names,
        statistics.median(times),
        times[min(len(times) - 1, math.ceil(0.95 * len(times)) - 1)],
        documents_examined(finds),
    )


def documents_examined(finds: list[tuple[str, dict]]) -> int | None:
    """What these finds examined, by the server's own account (`explain` runs each again with
    execution statistics); None when the operation sent no find or the server does not say.
    Writes are not counted: no server explains a write by `_id` without running it."""
    examined = None
    for database, command in finds:
        answer = mongo.get_client()[database].command(
            {"explain": command, "verbosity": "executionStats"}
        )
        found = answer.get("executionStats", {}).get("totalDocsExamined")
        if found is None:
            return None
        examined = (examined or 0) + found
    return examined


def bench_operations(
    *, board: Board, boards: list[Board], programmer: Programmer, others: list[Programmer]
) -> dict[str, Callable[[int], object]]:
    """The operations to measure, for a programmer in the middle of the board (and `others`, one
    for each solve of another programmer)."""
    standing = selectors.programmer_standing(board=board, programmer=programmer)
    pages = max(1, math.ceil(standing.total / selectors.PAGE_SIZE))
    group = programmer.group_scopes()[0] if programmer.group_scopes() else ""

    def solve(attempt: int) -> None:
        problem = Problem(slug=f"bench-{attempt + 1}", points=50)  # a new problem every time
        services.solve_record(programmer=programmer, problem=problem, solved_at=timezone.now())

    def solve_by_another(attempt: int) -> None:
        # Each solve moves somebody new into the journals, which fill and are folded into the
        # manifests every few dozen programmers: the median is a solve, the p95 a fold.
        problem = Problem(slug="bench-other", points=50)
        another = others[(attempt + 1) % len(others)]
        services.solve_record(programmer=another, problem=problem, solved_at=timezone.now())

    browser, top = Client(HTTP_HOST="127.0.0.1"), reverse("board", args=[board.slug])
    organizations = selectors.group_ranklist(board=board, kind="org").pages
    groups_api = reverse("api:group_ranklist", args=[board.slug])

    def top_page_first_build(_: int) -> None:
        cache.clear()  # as after a deploy, or the first visit of a new day or scope
        browser.get(top)

    return {
        "top page (first build)": top_page_first_build,
        "top page (cached)": lambda _: browser.get(top),
        "page 1": lambda _: selectors.board_page(board=board, page=1),
        "middle page": lambda _: selectors.board_page(board=board, page=max(1, pages // 2)),
        "last page": lambda _: selectors.board_page(board=board, page=pages),
        "rank": lambda _: selectors.programmer_standing(board=board, programmer=programmer),
        "around me (4)": lambda _: selectors.programmer_neighbours(
            board=board, standing=standing, around=4
        ),
        "group page": lambda _: selectors.board_page(board=board, page=1, scope=group),
        "profile": lambda _: selectors.programmer_profile(programmer=programmer),
        "year and streaks": lambda _: selectors.programmer_year(programmer=programmer),
        "problems with solver counts": lambda _: selectors.problems_with_solvers(),
        "a problem's solvers": lambda _: selectors.problem_solvers(
            problem=Problem(slug="bench-1", points=50)
        ),
        "countries ranked": lambda _: selectors.group_ranklist(board=board, kind="country"),
        "organizations, middle page (API)": lambda _: browser.get(
            f"{groups_api}?kind=org&page={max(1, organizations // 2)}"
        ),
        f"solve ({len(boards)} boards)": solve,
        "solve, another each time": solve_by_another,
    }


def bench_run(
    *,
    uri: str,
    sizes: list[int],
    repeat: int = 5,
    report: Callable[[str], None] = print,
    redis_url: str | None = None,
    ingest: int = 0,
) -> list[Measure]:
    """Seed each size in turn and measure every operation on the default board."""
    boards = list(Board.objects.all())
    board = selectors.board_default()
    if board is None:
        raise CommandError("There are no boards to measure.")
    counter = CommandCounter()
    results: list[Measure] = []
    for size in sizes:
        with scratch_database(uri, counter):
            mongo.ensure_indexes([b.slug for b in boards])
            started = time.perf_counter()
            programmers = bench_seed(boards=boards, size=size, rng=random.Random(size))
            report(f"Seeded {size:,} programmers in {time.perf_counter() - started:.1f} s.")
            redis_times = (
                redis_bench(redis_url, board=board, size=size, repeat=repeat) if redis_url else {}
            )
            for result in _size_measures(counter, board, boards, programmers, repeat, redis_times):
                results.append(result)
                report(f"· {table_row(result)}")  # a long run shows what it has so far
            if ingest:
                rate = ingest_through_api(uri, solves=ingest, report=report)
                results.append(
                    Measure(size, "ingest (solves/s)", 0, "HTTP API, 8 clients", rate, rate)
                )
                report(f"· {table_row(results[-1])}")
    return results


def _size_measures(
    counter: CommandCounter,
    board: Board,
    boards: list[Board],
    programmers: list[Programmer],
    repeat: int,
    redis_times: dict[str, float],
) -> Iterator[Measure]:
    """Each operation measured on the seeded board, as it is done."""
    size = len(programmers)
    middle = sorted(programmers, key=lambda p: p.pk)[size // 2]
    others = random.Random(size + 1).sample(programmers, min(size, 1000))
    operations = bench_operations(board=board, boards=boards, programmer=middle, others=others)
    for name, operation in operations.items():
        names, median, p95, examined = _measure(counter, operation, repeat)
        detail = ", ".join(f"{command}×{n}" for command, n in sorted(names.items()))
        redis = redis_times.get(name.split(" (")[0])
        yield Measure(size, name, sum(names.values()), detail, median, p95, redis, examined)
    yield prefix_search_measure(counter, board, programmers, repeat)


def prefix_search_measure(
    counter: CommandCounter, board: Board, programmers: list[Programmer], repeat: int
) -> Measure:
    """The search by the start of a handle through the API (100 handles start with the one
    asked: 20 listed, the rest counted), with the seeded programmers saved in SQL for the while,
    in a transaction rolled back afterwards. Its SQL queries show in the detail ("sql×N": a range
    of the handle index and a capped count), beside its MongoDB commands."""
    middle = sorted(programmers, key=lambda p: p.pk)[len(programmers) // 2]
    url = f"{reverse('api:programmers_search')}?prefix={middle.handle[:-2]}&board={board.slug}"
    browser = Client(HTTP_HOST="127.0.0.1")

    def search(_: int) -> None:
        with CaptureQueriesContext(connection) as queries:
            browser.get(url)
        counter.names["sql"] += len(queries)

    with transaction.atomic():
        Programmer.objects.bulk_create(programmers, batch_size=5000)
        names, median, p95, examined = _measure(counter, search, repeat)
        transaction.set_rollback(True)
    detail = ", ".join(f"{command}×{n}" for command, n in sorted(names.items()))
    commands = sum(n for command, n in names.items() if command != "sql")
    return Measure(
        len(programmers), "prefix search (API)", commands, detail, median, p95, None, examined
    )


TABLE_HEADING = (
    f"{'programmers':>12}  {'operation':<34}{'commands':>9}{'examined':>9}"
    f"{'median ms':>11}{'p95 ms':>9}{'redis ms':>10}  commands by name"
)


def table_row(result: Measure) -> str:
    redis = f"{result.redis:>10.2f}" if result.redis is not None else f"{'':>10}"
    examined = f"{result.examined:>9,}" if result.examined is not None else f"{'':>9}"
    return (
        f"{result.programmers:>12,}  {result.operation:<34}{result.commands:>9}{examined}"
        f"{result.median:>11.1f}{result.p95:>9.1f}{redis}  {result.detail}"
    )


# --- sustained ingest through the HTTP API ------------------------------------------------------


def ingest_through_api(uri: str, *, solves: int, report: Callable[[str], None]) -> float:
    """Start the web server on the scratch database and post `solves` solves through the API
    from 8 clients at once. Returns solves per second."""
    service_token, token = tokens.service_token_create(name=f"bench {timezone.now():%H%M%S}")
    try:
        with web_server(uri) as base:
            moment = timezone.now().isoformat()
            bodies = [
                {
                    "id": f"bench-ingest-{n}",
                    "programmer": f"ingest{n % 500:04d}",
                    "problem": f"ingest-{n // 500}",
                    "solved_at": moment,
                }
                for n in range(solves)
            ]
            seconds, failures = _post_at_once(f"{base}/api/v1/solves", token, bodies)
        if failures:
            report(f"{len(failures)} of {solves} ingest requests failed: {failures[0]}")
        return solves / seconds
    finally:
        service_token.delete()
        Programmer.objects.filter(handle__startswith="ingest").delete()
        Problem.objects.filter(slug__startswith="ingest-").delete()


@contextlib.contextmanager
def web_server(uri: str) -> Iterator[str]:
    """gunicorn serving the site on the database at `uri` (2 workers of 4 threads), for as long
    as the block runs: its base URL."""
    port = embedded_mongo.free_port()
    environment = {
        **os.environ,
        "MONGODB_URI": uri,
        "MONGODB_DB": settings.MONGODB_DB,
        "DEBUG": "true",
        "ALLOWED_HOSTS": "127.0.0.1",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "leaderboard_site.wsgi", "-w", "2", "--threads", "4"]
        + ["-b", f"127.0.0.1:{port}", "--log-level", "warning"],
        env=environment,
    )
    try:
        _wait_for(f"http://127.0.0.1:{port}/api/v1/boards")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(10)


def _post_at_once(url: str, token: str, bodies: list[dict]) -> tuple[float, list[str]]:
    """POST the bodies from INGEST_CLIENTS clients at once, each its share one after another:
    (seconds taken, the errors of the requests that failed)."""
    failures: list[str] = []

    def client(share: list[dict]) -> None:
        for body in share:
            request = urllib.request.Request(
                url,
                data=json.dumps(body).encode(),
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=60) as answer:
                    answer.read()
            except Exception as error:  # counted, reported by the caller
                failures.append(str(error))

    started = time.perf_counter()
    threads = [
        threading.Thread(target=client, args=(bodies[i::INGEST_CLIENTS],))
        for i in range(INGEST_CLIENTS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, failures


def _wait_for(url: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except Exception:
            time.sleep(0.2)
    raise CommandError(f"The web server did not answer at {url}.")


# --- the same operations on Redis sorted sets --------------------------------------------------


def redis_bench(url: str, *, board: Board, size: int, repeat: int) -> dict[str, float]:
    """Median milliseconds of the reads and a forward-dated solve on Redis sorted sets holding the
    same number of programmers, one sorted set per board day (the comparison DESIGN.md makes)."""
    import redis  # production's cache client; only the bench talks to Redis this way

    client = redis.Redis.from_url(url)
    key = "bench:board"
    _redis_board_fill(client, key, size)
    timings = {}
    for name, operation in _redis_operations(client, key, size).items():
        _names, median, _p95, _examined = _measure(CommandCounter(), operation, repeat)
        timings[name] = median
    client.delete(key, *[f"{key}:{day}" for day in range(38)])
    return timings


def _redis_board_fill(client, key: str, size: int) -> None:
    """A sorted set of `size` programmers with random scores, sent 10,000 at a time."""
    rng = random.Random(size)
    client.delete(key)
    for start in range(0, size, 10_000):
        client.zadd(
            key,
            {
                f"bench{n:07d}": rng.randrange(1, 60)
                for n in range(start, min(size, start + 10_000))
            },
        )


def _redis_operations(client, key: str, size: int) -> dict[str, Callable[[int], object]]:
    """The reads and the solve of `bench_operations`, on the sorted set `key`."""
    middle = f"bench{size // 2:07d}"
    pages = max(1, math.ceil(size / selectors.PAGE_SIZE))

    def page(number: int) -> Callable[[int], object]:
        first = (number - 1) * selectors.PAGE_SIZE
        return lambda _: client.zrevrange(
            key, first, first + selectors.PAGE_SIZE - 1, withscores=True
        )

    def around(_: int) -> object:
        rank = client.zrevrank(key, middle)
        return client.zrevrange(key, max(0, rank - 4), rank + 4, withscores=True)

    def solve(_: int) -> object:
        # A solve on the three default boards: 7 + 30 forward-dated days and the all-time total.
        pipe = client.pipeline()
        for day in range(38):
            pipe.zincrby(f"{key}:{day}", 1, middle)
        return pipe.execute()

    return {
        "page 1": page(1),
        "middle page": page(max(1, pages // 2)),
        "last page": page(pages),
        "rank": lambda _: (client.zrevrank(key, middle), client.zscore(key, middle)),
        "around me": around,
        "solve": solve,
    }


class Command(BaseCommand):
    help = "Time the common operations and count their MongoDB commands at several board sizes."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--programmers",
            default="1000,100000",
            help="Comma-separated board sizes to measure (default: 1000,100000).",
        )
        parser.add_argument("--uri", help="The MongoDB server (default: MONGODB_URI or embedded).")
        parser.add_argument("--repeat", type=int, default=20, help="Timed runs per operation.")
        parser.add_argument("--redis", help="Also run the operations on Redis at this URL.")
        parser.add_argument(
            "--ingest", type=int, default=0, help="Post this many solves through the HTTP API."
        )

    def handle(self, *args, programmers: str, uri: str | None, repeat: int, **options) -> None:
        try:
            sizes = [int(size.replace("_", "")) for size in programmers.split(",")]
        except ValueError as error:
            raise CommandError("--programmers takes sizes like 1000,100000.") from error
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
                redis_url=options["redis"],
                ingest=options["ingest"],
            )
        self.stdout.write("")
        self.stdout.write(self.style.MIGRATE_HEADING(TABLE_HEADING))
        for result in results:
            self.stdout.write(table_row(result))
        by_operation: dict[str, set[int]] = {}
        for result in results:
            if not result.operation.startswith("ingest"):  # solves per second, not commands
                by_operation.setdefault(result.operation, set()).add(result.commands)
        steady = [name for name, counts in by_operation.items() if len(counts) == 1]
        self.stdout.write(
            self.style.SUCCESS(f"Same number of commands at every size: {', '.join(steady)}.")
        )

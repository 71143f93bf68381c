"""Counting what an operation sends to MongoDB and gets back, and timing it.

Why a module of its own: every row of the bench, in process or through HTTP, goes through
`measure`, and one listener counts for all of them. It is installed on the bench's one MongoDB
client, which the web server's thread uses too (see `web`), so a request's commands are counted
exactly, whatever the machine's noise.

Bytes are the BSON size of each command as the driver sent it and of each reply as it came back
(`bson.encode` of the documents that pymongo's command monitoring hands over; the events carry no
wire size). That is the wire size within the few bytes of each message's header, and without
compression, which the site does not turn on.
"""

from __future__ import annotations

import contextlib
import math
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import bson
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pymongo import monitoring

from solutions import mongo

from .cpu import CpuReading

# How each row was measured, as the table says it.
IN_PROCESS = "in process"
HTTP_UNCACHED = "HTTP, cache cleared"
HTTP_CACHED = "HTTP, page cached"

# The parts of a sent command that `explain` must not repeat (the driver adds them to each).
SESSION_FIELDS = {"lsid", "txnNumber", "readConcern", "writeConcern", "$db", "$clusterTime"}


@dataclass
class Tally:
    """What one run of an operation sent: commands by name, bytes each way, its finds."""

    names: Counter[str] = field(default_factory=Counter)
    sent: int = 0
    received: int = 0
    finds: list[tuple[str, dict]] = field(default_factory=list)


class CommandCounter(monitoring.CommandListener):
    """Counts commands and their bytes while `counting` (pymongo calls it for every command it
    starts and every reply); idle otherwise, as seeding a board sends hundreds of megabytes
    nobody needs counted. Keeps the finds, so that the server can say what they examined.
    `server_pid` is the server's process when the bench knows it, for its CPU (see `cpu`)."""

    def __init__(self, server_pid: int | None = None) -> None:
        self.server_pid = server_pid
        self.tally = Tally()
        self._active = False
        self._lock = threading.Lock()  # the web server's thread reports here too

    @contextlib.contextmanager
    def counting(self) -> Iterator[Tally]:
        with self._lock:
            self.tally, self._active = Tally(), True
        try:
            yield self.tally
        finally:
            with self._lock:
                self._active = False

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if not self._active:
            return
        size = len(bson.encode(event.command))
        with self._lock:
            self.tally.names[event.command_name] += 1
            self.tally.sent += size
            if event.command_name == "find":
                command = {k: v for k, v in event.command.items() if k not in SESSION_FIELDS}
                self.tally.finds.append((event.database_name, command))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        if not self._active:
            return
        size = len(bson.encode(event.reply))
        with self._lock:
            self.tally.received += size

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


@dataclass(frozen=True)
class Measure:
    """One operation at one size: what its last run sent and got back, and its times."""

    programmers: int
    operation: str
    how: str  # IN_PROCESS, HTTP_UNCACHED or HTTP_CACHED
    names: dict[str, float]  # MongoDB commands by name, "sql": the SQL queries (a mean: floats)
    sent: int  # bytes sent to MongoDB
    received: int  # bytes received from it
    median: float  # milliseconds
    p95: float
    examined: int | None = None  # documents the finds examined (the server's explain)
    redis: float | None = None  # the same operation on Redis sorted sets, median milliseconds
    note: str = ""  # how a mean was taken (how many runs, how many folds among them)
    server_cpu: float | None = None  # the MongoDB server's CPU ms an operation (None: unknown)
    django_cpu: float | None = None  # the bench process's CPU ms an operation (site and driver)

    @property
    def commands(self) -> float:
        """MongoDB commands (the SQL queries are in `names`, not here)."""
        return round(sum(n for name, n in self.names.items() if name != "sql"), 1)

    @property
    def detail(self) -> str:
        """The commands by name, e.g. "find×3, sql×2", and the note of a mean."""
        named = ", ".join(f"{name}×{round(n, 1):g}" for name, n in sorted(self.names.items()))
        return f"{named}; {self.note}" if self.note else named


def timed(
    operation: Callable[[int], object], repeat: int, before: Callable[[], object] | None = None
) -> tuple[float, float]:
    """Run once to warm up, then `repeat` times, each after `before` (not timed): the median and
    95th percentile of the times, in milliseconds."""
    times = []
    for attempt in range(-1, repeat):
        if before is not None:
            before()
        started = time.perf_counter()
        operation(attempt)
        if attempt >= 0:
            times.append((time.perf_counter() - started) * 1000)
    return _median_and_p95(times)


def measure(
    counter: CommandCounter,
    operation: Callable[[int], object],
    *,
    programmers: int,
    name: str,
    how: str = IN_PROCESS,
    repeat: int,
    before: Callable[[], object] | None = None,
) -> Measure:
    """Run `operation` once to warm up, then `repeat` times, each after `before` (not timed: a
    cache cleared); its commands, bytes and SQL queries are those of the last run (the same in
    every run but the warm-up, which fills the caches a process keeps), its CPU the mean of the
    timed runs (`before` included: a cache cleared costs the server nothing)."""
    runs = _runs(counter, operation, repeat=repeat, before=before)
    median, p95 = _median_and_p95(runs.times)
    names = dict(runs.tally.names) | ({"sql": runs.queries} if runs.queries else {})
    examined = documents_examined(runs.tally.finds)  # after the CPU is read: explain costs some
    return Measure(
        programmers,
        name,
        how,
        names,
        runs.tally.sent,
        runs.tally.received,
        median,
        p95,
        examined,
        server_cpu=runs.server_cpu,
        django_cpu=runs.django_cpu,
    )


@dataclass(frozen=True)
class _Runs:
    """The timed runs of an operation: their times (milliseconds), the last one's commands and
    SQL queries, and the CPU milliseconds a run, the server's and the bench's."""

    times: list[float]
    tally: Tally
    queries: int
    server_cpu: float | None
    django_cpu: float


def _runs(
    counter: CommandCounter,
    operation: Callable[[int], object],
    *,
    repeat: int,
    before: Callable[[], object] | None,
) -> _Runs:
    """The warm-up run (attempt -1), then `repeat` timed ones, each after `before`."""
    times: list[float] = []
    cpu_start = None
    for attempt in range(-1, repeat):
        if attempt == 0:
            cpu_start = CpuReading.now(counter.server_pid)
        if before is not None:
            before()
        with CaptureQueriesContext(connection) as captured, counter.counting() as tally:
            started = time.perf_counter()
            operation(attempt)
            elapsed = (time.perf_counter() - started) * 1000
        queries = len(captured)
        if attempt >= 0:
            times.append(elapsed)
    assert cpu_start is not None  # repeat >= 1
    server_cpu, django_cpu = cpu_start.per_operation(CpuReading.now(counter.server_pid), repeat)
    return _Runs(times, tally, queries, server_cpu, django_cpu)


def _median_and_p95(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[min(len(times) - 1, math.ceil(0.95 * len(times)) - 1)]


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

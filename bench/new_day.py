"""A new day (issue 36): the first solve after midnight, which makes the day's orders from the
day before (`leaderboard.day_change`), and the first page of the new day read after it.

Why a module of its own: a day changes once, so each timed run needs a day of its own. The
clock is moved on (time_machine, ticking) to one second past each next midnight in the
leaderboard's time zone, one day a run, and at each the bench's programmer solves a new problem
(the batch that counts it brings every board's frontier to the new day first, under the lease)
and then the default board's first page is read. The day change's work is bounded by the
programmers it moves: those who solved on the day leaving a rolling window, or on the new day,
counted here from the logs (the seed logs its solves and reports) and said in the row's note.

These rows come last at each size: afterwards the orders reach days ahead of the real clock's,
so a solve on the real clock would move its programmer in each of them.
"""

from __future__ import annotations

import datetime as dt
import functools
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from solutions import clock, leaderboard, mongo, selectors, services
from solutions.models import Board, Problem, Programmer

from .counting import IN_PROCESS, CommandCounter, Measure, Tally, documents_examined
from .cpu import CpuReading

NEW_DAY_SOLVE = "new day: the first solve after midnight (with the day change's work)"
NEW_DAY_PAGE = "new day: first board page"
LAST_HOUR_BEGIN = "last hour: the solve that begins tomorrow (under the lease)"
LAST_HOUR_PASS = "last hour: tomorrow's pass (the prepare task, off the lease)"
LAST_HOUR_FINISH = "last hour: the solve that finishes tomorrow (under the lease)"
LAST_HOUR_OTHERS = 20  # programmers who solve between tomorrow's beginning and its pass


@dataclass
class _Runs:
    """One row's runs, one a day: the last run's commands, and every timed run's time and CPU."""

    tally: Tally = field(default_factory=Tally)
    queries: int = 0
    times: list[float] = field(default_factory=list)
    server_cpu: float | None = 0.0
    django_cpu: float = 0.0

    def run(self, counter: CommandCounter, operation: Callable[[], object], timed: bool) -> None:
        with CaptureQueriesContext(connection) as captured, counter.counting() as tally:
            cpu_start = CpuReading.now(counter.server_pid)
            started = time.perf_counter()
            operation()
            elapsed = (time.perf_counter() - started) * 1000
            server, own = cpu_start.per_operation(CpuReading.now(counter.server_pid), 1)
        self.tally, self.queries = tally, len(captured)
        if timed:
            self.times.append(elapsed)
            both = None if server is None or self.server_cpu is None else self.server_cpu + server
            self.server_cpu, self.django_cpu = both, self.django_cpu + own

    def measure(self, size: int, name: str, note: str) -> Measure:
        times, runs = sorted(self.times), len(self.times)
        names = dict(self.tally.names) | ({"sql": self.queries} if self.queries else {})
        return Measure(
            size,
            name,
            IN_PROCESS,
            names,
            self.tally.sent,
            self.tally.received,
            statistics.median(times),
            times[min(runs - 1, -(-95 * runs // 100) - 1)],
            documents_examined(self.tally.finds),
            note=note,
            server_cpu=None if self.server_cpu is None else self.server_cpu / runs,
            django_cpu=self.django_cpu / runs,
        )


def new_day_measures(
    counter: CommandCounter,
    *,
    board: Board,
    boards: list[Board],
    programmer: Programmer,
    size: int,
    repeat: int,
) -> Iterator[Measure]:
    """The first solve of each of `repeat` new days (and one more to warm up) with the day
    change it brings, and the first page read after it."""
    import time_machine  # a development dependency (as the embedded server): only for these rows

    solve, page = _Runs(), _Runs()
    moved: list[int] = []
    for attempt, day in enumerate(days_measured(repeat), start=-1):
        midnight = leaderboard.day_start(day, settings.LEADERBOARD_TIME_ZONE)
        with time_machine.travel(midnight + dt.timedelta(seconds=1), tick=True):
            due = programmers_moved(boards, day)
            first_solve = functools.partial(
                services.solve_record,
                programmer=programmer,
                problem=Problem(slug=f"bench-new-day-{attempt + 1}", points=50),
                solved_at=timezone.now(),
            )
            solve.run(counter, first_solve, timed=attempt >= 0)
            first_page = functools.partial(selectors.board_page, board=board, page=1)
            page.run(counter, first_page, timed=attempt >= 0)
        if attempt >= 0:
            moved.append(due)
    days = f"{repeat} new days, each" if repeat > 1 else "1 new day,"
    moves = f"{min(moved):,}" if min(moved) == max(moved) else f"{min(moved):,} to {max(moved):,}"
    note = f"{days} moving {moves} programmers (summed over its {len(boards)} boards)"
    yield solve.measure(size, NEW_DAY_SOLVE, note)
    yield page.measure(size, NEW_DAY_PAGE, f"{days} read after the day's first solve")


def last_hour_measures(
    counter: CommandCounter,
    *,
    boards: list[Board],
    programmer: Programmer,
    others: list[Programmer],
    size: int,
    repeat: int,
) -> Iterator[Measure]:
    """A day made in the last hour of the day before, as a site with beat makes it
    (`day_change`): the bench's programmer's solve begins it, LAST_HOUR_OTHERS others solve, the
    prepare task's pass copies the roots and moves everybody the day changes (off the applier's
    lease, while solves go on), and the programmer's next solve finishes it with the others.
    Once: a day begins once. The day after the new-day rows' (`last_hour_day`), so that theirs
    stay as they were."""
    day, others = last_hour_day(repeat), others[:LAST_HOUR_OTHERS]
    begin, passing, finish = last_hour_runs(counter, boards, programmer, others, day)
    moved = f"moving {programmers_moved(boards, day):,} programmers (summed over its boards)"
    yield begin.measure(size, LAST_HOUR_BEGIN, "the journal folded, on every board")
    yield passing.measure(size, LAST_HOUR_PASS, moved)
    meanwhile = f"with the {len(others)} who solved before the pass"
    yield finish.measure(size, LAST_HOUR_FINISH, meanwhile)


def last_hour_runs(
    counter: CommandCounter,
    boards: list[Board],
    programmer: Programmer,
    others: list[Programmer],
    day: int,
) -> tuple[_Runs, _Runs, _Runs]:
    """The beginning, the pass and the finish of `day`, 50 minutes before its midnight."""
    import time_machine

    windows = {board.slug: board.spec for board in boards}
    evening = leaderboard.day_start(day, settings.LEADERBOARD_TIME_ZONE) - dt.timedelta(minutes=50)
    begin, passing, finish = _Runs(), _Runs(), _Runs()

    def solve(who: Programmer, problem: str) -> Callable[[], object]:
        made = Problem(slug=f"bench-last-hour-{problem}", points=50)
        return lambda: services.solve_record(programmer=who, problem=made, solved_at=timezone.now())

    with time_machine.travel(evening, tick=True):
        begin.run(counter, solve(programmer, "begins"), timed=True)
        for other in others:
            solve(other, "meanwhile")()
        passing.run(counter, lambda: leaderboard.days_pass(windows), timed=True)
        finish.run(counter, solve(programmer, "finishes"), timed=True)
    return begin, passing, finish


def days_measured(repeat: int) -> list[int]:
    """The new days the rows run on from tomorrow, one to warm up and one a run."""
    return [clock.today() + 1 + n for n in range(repeat + 1)]


def last_hour_day(repeat: int) -> int:
    """The day the last-hour rows make, the day after the new-day rows' last."""
    return days_measured(repeat)[-1] + 1


def days_changed(repeat: int) -> list[int]:
    """Every day the rows change to: the new-day rows' and the last-hour rows'."""
    return [*days_measured(repeat), last_hour_day(repeat)]


def solve_days_read(boards: list[Board], repeat: int) -> set[int]:
    """The solve days whose logs the rows' day changes read (on every board, each day
    changed to's `days_moving`): the seed logs these (see `seed`). A run that crosses midnight
    measures a day later, whose oldest leaving day is not logged: it moves fewer programmers,
    which its note counts from the same logs."""
    return {
        solve_day
        for day in days_changed(repeat)
        for board in boards
        for solve_day in board.spec.days_moving(day)
    }


def programmers_moved(boards: list[Board], day: int) -> int:
    """The programmers the change to `day` moves, summed over the boards: on each rolling window,
    those who solved (on a best-score board: reported) on a day it moves (`days_moving`: the day
    leaving it, and `day` itself), from the logs, as the day change finds them."""
    moved = 0
    for board in boards:
        log = mongo.scores() if board.is_best else mongo.solves()
        found: set[int] = set()
        for solve_day in board.spec.days_moving(day):
            during = {
                "$gte": leaderboard.day_start(solve_day, settings.LEADERBOARD_TIME_ZONE),
                "$lt": leaderboard.day_start(solve_day + 1, settings.LEADERBOARD_TIME_ZONE),
            }
            logged = log.find({"solved_at": during}, {"programmer_id": 1})
            found |= {solve["programmer_id"] for solve in logged}
        moved += len(found)
    return moved

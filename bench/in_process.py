"""The engine's own cost: selectors and services called directly, with no HTTP around them.

Why a module of its own: these rows say what the reads and the solve cost underneath the views
(the HTTP rows of `web` add the request's own reads: the board's version, the page's parts), so
a difference between the two is the view's, and each row can be set beside its Redis twin.
"""

from __future__ import annotations

import dataclasses
import math
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from django.utils import timezone

from solutions import leaderboard, selectors, services
from solutions.models import Board, Problem, Programmer

from .counting import IN_PROCESS, CommandCounter, Measure, measure
from .cpu import CpuReading
from .seed import SOLVED_BY_ALL


def bench_operations(
    *, board: Board, boards: list[Board], programmer: Programmer, others: list[Programmer]
) -> dict[str, Callable[[int], object]]:
    """The operations to measure, for a programmer in the middle of the board (and `others`, one
    for each solve of another programmer)."""
    return {
        **_streak_operations(boards, programmer),
        **_read_operations(board, programmer),
        **_solve_operations(boards, programmer, others),
        **_best_operations(boards, programmer),
    }


def _read_operations(board: Board, programmer: Programmer) -> dict[str, Callable[[int], object]]:
    """The board's pages, the programmer's rank, neighbours, profile and year, the problems'
    solvers and the groups ranked."""
    standing = selectors.programmer_standing(board=board, programmer=programmer)
    pages = max(1, math.ceil(standing.total / selectors.PAGE_SIZE))
    group = programmer.group_scopes()[0] if programmer.group_scopes() else ""
    return {
        "page 1": lambda _: selectors.board_page(board=board, page=1),
        "middle page": lambda _: selectors.board_page(board=board, page=max(1, pages // 2)),
        "last page": lambda _: selectors.board_page(board=board, page=pages),
        "rank": lambda _: selectors.programmer_standing(board=board, programmer=programmer),
        "score range (2 to 4)": lambda _: selectors.board_score_range(
            board=board, min_score=2, max_score=4
        ),
        "around me (4)": lambda _: selectors.programmer_around(
            board=board, programmer=programmer, around=4
        ),
        "group page": lambda _: selectors.board_page(board=board, page=1, scope=group),
        "profile": lambda _: selectors.programmer_profile(programmer=programmer),
        "year and streaks": lambda _: selectors.programmer_year(programmer=programmer),
        "problems with solver counts": lambda _: selectors.problems_with_solvers(),
        "a problem's solvers": lambda _: selectors.problem_solvers(
            problem=Problem(slug="bench-1", points=50)
        ),
        "a problem's solvers, middle page": lambda _: selectors.problem_solvers_page(
            problem=Problem(slug=SOLVED_BY_ALL), page=max(1, math.ceil(standing.total / 100))
        ),
        "countries ranked": lambda _: selectors.group_ranklist(board=board, kind="country"),
    }


def _solve_operations(
    boards: list[Board], programmer: Programmer, others: list[Programmer]
) -> dict[str, Callable[[int], object]]:
    """The programmer's solve of a new problem every time, and a solve by another programmer
    each time (`others` in turn)."""

    def solve(attempt: int) -> None:
        problem = Problem(slug=f"bench-{attempt + 1}", points=50)  # a new problem every time
        services.solve_record(programmer=programmer, problem=problem, solved_at=timezone.now())

    def solve_by_another(attempt: int) -> None:
        # Each solve moves somebody new into the journals, which fill and are folded into the
        # manifests every few dozen programmers: the median is a solve, the p95 a fold.
        problem = Problem(slug="bench-other", points=50)
        another = others[(attempt + 1) % len(others)]
        services.solve_record(programmer=another, problem=problem, solved_at=timezone.now())

    counting_solves = [b for b in boards if not b.is_best]  # a best-score board counts scores
    return {
        f"solve ({len(counting_solves)} boards)": solve,
        "solve, another each time": solve_by_another,
    }


SCORE_REPORTED = "a score reported (best-score board)"


def _best_operations(
    boards: list[Board], programmer: Programmer
) -> dict[str, Callable[[int], object]]:
    """A judge's scored report (a new problem every time, a score the middle of the seed's) when
    a best-score board is measured (`seed.best_board`): it counts on the best-score boards
    alone, as a solve counts on the others."""
    if not any(board.is_best for board in boards):
        return {}

    def report(attempt: int) -> None:
        problem = Problem(slug=f"bench-score-{attempt + 1}", points=50)
        services.score_record(
            programmer=programmer, problem=problem, solved_at=timezone.now(), score=500
        )

    return {SCORE_REPORTED: report}


def _streak_operations(
    boards: list[Board], programmer: Programmer
) -> dict[str, Callable[[int], object]]:
    """A page and a programmer's neighbours on each streak board (a site's seeded boards: the
    tests' database leaves them out), read like any board's."""
    operations: dict[str, Callable[[int], object]] = {}
    for board in (b for b in boards if b.is_streak):
        operations[f"{board.slug}: page 1"] = lambda _, b=board: selectors.board_page(board=b)
        operations[f"{board.slug}: around me (4)"] = lambda _, b=board: selectors.programmer_around(
            board=b, programmer=programmer, around=4
        )
    return operations


def in_process_measures(
    counter: CommandCounter,
    *,
    board: Board,
    boards: list[Board],
    programmers: list[Programmer],
    middle: Programmer,
    repeat: int,
    redis_times: dict[str, float],
    folds: int = 3,
) -> Iterator[Measure]:
    """Each operation measured on the seeded board, as it is done; then a solve by another
    programmer each time, mean with `folds` folds of every journal (none: no such row)."""
    size = len(programmers)
    # In a country like the bench's programmer, so that every solve moves the same orders.
    in_a_country = [programmer for programmer in programmers if programmer.country]
    others = random.Random(size + 1).sample(in_a_country, min(len(in_a_country), 1000))
    operations = bench_operations(board=board, boards=boards, programmer=middle, others=others)
    for name, operation in operations.items():
        result = measure(counter, operation, programmers=size, name=name, repeat=repeat)
        redis = redis_times.get(name.split(" (")[0])
        yield dataclasses.replace(result, redis=redis)
    if folds:
        yield mean_with_folds(counter, boards=boards, others=others, size=size, folds=folds)


ANOTHER_EACH_TIME = "solve, another each time (mean with its folds)"
MOST_SOLVES = 5000  # a bound on the row's solves, whatever the journals hold


def mean_with_folds(
    counter: CommandCounter, *, boards: list[Board], others: list[Programmer], size: int, folds: int
) -> Measure:
    """A solve by another programmer each time, as many as it takes for `folds` folds of the
    busiest board's journal (a journal is folded when it is full: its `epoch` moves on; a streak
    board's moves only when a streak changes): commands, bytes and time per solve on average,
    the folds' included. Its note says how many solves, and how many folds each board made."""
    first = _epochs(boards)
    solves = _SolvesSum()
    while (
        solves.count < MOST_SOLVES and max(_folds_since(first, boards).values(), default=0) < folds
    ):
        another = others[solves.count % len(others)]
        problem = Problem(slug=f"bench-folds-{solves.count // len(others)}", points=50)
        solves.add(counter, programmer=another, problem=problem)
    done = _folds_since(first, boards)
    return solves.mean(
        size,
        note=f"{solves.count} solves, {min(done.values(), default=0)} to "
        f"{max(done.values(), default=0)} folds a board",
    )


@dataclass
class _SolvesSum:
    """The solves `mean_with_folds` made so far: their commands, bytes, times and CPU."""

    names: Counter[str] = field(default_factory=Counter)
    sent: int = 0
    received: int = 0
    times: list[float] = field(default_factory=list)  # milliseconds, one a solve
    server_cpu: float | None = 0.0  # None once a solve's is unknown
    django_cpu: float = 0.0

    @property
    def count(self) -> int:
        return len(self.times)

    def add(self, counter: CommandCounter, *, programmer: Programmer, problem: Problem) -> None:
        """One solve, counted and timed."""
        with counter.counting() as tally:
            cpu_start = CpuReading.now(counter.server_pid)  # the solve's alone, not the epochs'
            started = time.perf_counter()
            services.solve_record(programmer=programmer, problem=problem, solved_at=timezone.now())
            self.times.append((time.perf_counter() - started) * 1000)
            server, own = cpu_start.per_operation(CpuReading.now(counter.server_pid), 1)
        known = server is not None and self.server_cpu is not None
        self.server_cpu = self.server_cpu + server if known else None
        self.django_cpu += own
        self.names.update(tally.names)
        self.sent, self.received = self.sent + tally.sent, self.received + tally.received

    def mean(self, size: int, *, note: str) -> Measure:
        """The row: an average solve, and the median and 95th percentile of their times."""
        solves, times = self.count, sorted(self.times)
        return Measure(
            size,
            ANOTHER_EACH_TIME,
            IN_PROCESS,
            {name: n / solves for name, n in self.names.items()},
            self.sent // solves,
            self.received // solves,
            statistics.median(times),
            times[min(len(times) - 1, math.ceil(0.95 * len(times)) - 1)],
            note=note,
            server_cpu=None if self.server_cpu is None else self.server_cpu / solves,
            django_cpu=self.django_cpu / solves,
        )


def _epochs(boards: list[Board]) -> dict[str, int]:
    return {board.slug: leaderboard.folds_done(board.slug) for board in boards}


def _folds_since(first: dict[str, int], boards: list[Board]) -> dict[str, int]:
    """Each board's folds since `first` (its journal's epoch then), all-time boards' included."""
    return {slug: epoch - first[slug] for slug, epoch in _epochs(boards).items()}

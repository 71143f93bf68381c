"""One size after another: seed, measure in process, through HTTP and on new days, drop.

Why a module of its own: it is the bench's order of work, and what the tests call
(`bench_run`), with the command line left to `manage.py bench`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.core.management.base import CommandError

from solutions import mongo, selectors
from solutions.models import Board, Programmer

from .counting import CommandCounter, Measure
from .in_process import in_process_measures
from .ingest import INGEST_CLIENTS, ingest_through_api
from .new_day import last_hour_measures, new_day_measures, solve_days_read
from .on_redis import redis_bench
from .report import INGEST, progress_line
from .seed import bench_seed, best_board, scratch_database
from .web import web_measures


@dataclass(frozen=True)
class _Run:
    """What every size of a run is measured with."""

    uri: str
    repeat: int
    report: Callable[[str], None]
    redis_url: str | None
    ingest: int
    folds: int
    counter: CommandCounter
    board: Board  # the board measured
    boards: list[Board]  # every board seeded, a best-score board among them


def bench_run(
    *,
    uri: str,
    sizes: list[int],
    repeat: int = 5,
    report: Callable[[str], None] = print,
    redis_url: str | None = None,
    ingest: int = 0,
    folds: int = 3,
    server_pid: int | None = None,
) -> list[Measure]:
    """Seed each size in turn and measure every operation on the default board, in process and
    through HTTP (and with `ingest`, that many solves through gunicorn), then the first solve
    and page of new days; with the CPU of the server's process `server_pid` when known."""
    board = selectors.board_default()
    if board is None:
        raise CommandError("There are no boards to measure.")
    with best_board(list(Board.objects.all())) as boards:
        run = _Run(
            uri=uri,
            repeat=repeat,
            report=report,
            redis_url=redis_url,
            ingest=ingest,
            folds=folds,
            counter=CommandCounter(server_pid),
            board=board,
            boards=boards,
        )
        return _sizes_run(run, sizes)


def _sizes_run(run: _Run, sizes: list[int]) -> list[Measure]:
    results: list[Measure] = []
    for size in sizes:
        with scratch_database(run.uri, run.counter):
            mongo.ensure_indexes([b.slug for b in run.boards])
            for result in _size_measures(run, size):
                results.append(result)
                run.report(progress_line(result))
    return results


def _size_measures(run: _Run, size: int) -> Iterator[Measure]:
    """Seed `size` programmers, then measure, each as it is done: in process, through HTTP, the
    ingest through gunicorn (with `run.ingest`), and new days last."""
    programmers, middle = _seeded(run, size)
    redis_times = (
        redis_bench(run.redis_url, board=run.board, size=size, repeat=run.repeat)
        if run.redis_url
        else {}
    )
    yield from in_process_measures(
        run.counter,
        board=run.board,
        boards=run.boards,
        programmers=programmers,
        middle=middle,
        repeat=run.repeat,
        redis_times=redis_times,
        folds=run.folds,
    )
    yield from web_measures(
        run.counter,
        board=run.board,
        programmers=programmers,
        middle=middle,
        repeat=run.repeat,
        best=next(b for b in run.boards if b.is_best),
    )
    if run.ingest:
        rate = ingest_through_api(run.uri, solves=run.ingest, report=run.report)
        how = f"gunicorn, {INGEST_CLIENTS} clients"
        yield Measure(size, INGEST, how, {}, 0, 0, rate, rate)
    # Last: they move the orders' days past the real clock's (see `new_day`).
    yield from _days_measures(run, size, programmers, middle)


def _days_measures(
    run: _Run, size: int, programmers: list[Programmer], middle: Programmer
) -> Iterator[Measure]:
    """The new days, then a day made in the last hour of the day before (`new_day`), with
    others drawn from the programmers to solve while it is made."""
    yield from new_day_measures(
        run.counter,
        board=run.board,
        boards=run.boards,
        programmer=middle,
        size=size,
        repeat=run.repeat,
    )
    drawn = random.Random(size).sample(programmers, min(len(programmers), 101))
    others = [programmer for programmer in drawn if programmer != middle][:100]
    yield from last_hour_measures(
        run.counter,
        boards=run.boards,
        programmer=middle,
        others=others,
        size=size,
        repeat=run.repeat,
    )


def _seeded(run: _Run, size: int) -> tuple[list[Programmer], Programmer]:
    """`size` programmers seeded on every board (the run told how long it took), and the one
    in the middle of the measured board, whose reads and solves are measured."""
    started = time.perf_counter()
    seeded = bench_seed(
        boards=run.boards,
        measured=run.board,
        size=size,
        rng=random.Random(size),
        log_days=solve_days_read(run.boards, run.repeat),
    )
    run.report(f"Seeded {size:,} programmers in {time.perf_counter() - started:.1f} s.")
    return seeded.programmers, seeded.middle

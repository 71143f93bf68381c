"""One size after another: seed, measure in process, through HTTP and on new days, drop.

Why a module of its own: it is the bench's order of work, and what the tests call
(`bench_run`), with the command line left to `manage.py bench`.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable

from django.core.management.base import CommandError

from solutions import mongo, selectors
from solutions.models import Board

from .counting import CommandCounter, Measure
from .in_process import in_process_measures
from .ingest import INGEST_CLIENTS, ingest_through_api
from .new_day import new_day_measures
from .on_redis import redis_bench
from .report import INGEST, progress_line
from .seed import bench_seed, best_board, programmer_in_the_middle, scratch_database
from .web import web_measures


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
        return _sizes_run(
            uri=uri,
            sizes=sizes,
            repeat=repeat,
            report=report,
            redis_url=redis_url,
            ingest=ingest,
            folds=folds,
            counter=CommandCounter(server_pid),
            board=board,
            boards=boards,
        )


def _sizes_run(
    *,
    uri: str,
    sizes: list[int],
    repeat: int,
    report: Callable[[str], None],
    redis_url: str | None,
    ingest: int,
    folds: int,
    counter: CommandCounter,
    board: Board,
    boards: list[Board],
) -> list[Measure]:
    best = next(b for b in boards if b.is_best)
    results: list[Measure] = []
    for size in sizes:
        with scratch_database(uri, counter):
            mongo.ensure_indexes([b.slug for b in boards])
            started = time.perf_counter()
            programmers = bench_seed(boards=boards, size=size, rng=random.Random(size))
            report(f"Seeded {size:,} programmers in {time.perf_counter() - started:.1f} s.")
            middle = programmer_in_the_middle(board=board, programmers=programmers)
            redis_times = (
                redis_bench(redis_url, board=board, size=size, repeat=repeat) if redis_url else {}
            )
            measures = itertools.chain(
                in_process_measures(
                    counter,
                    board=board,
                    boards=boards,
                    programmers=programmers,
                    middle=middle,
                    repeat=repeat,
                    redis_times=redis_times,
                    folds=folds,
                ),
                web_measures(
                    counter,
                    board=board,
                    programmers=programmers,
                    middle=middle,
                    repeat=repeat,
                    best=best,
                ),
            )
            for result in measures:
                results.append(result)
                report(progress_line(result))
            if ingest:
                rate = ingest_through_api(uri, solves=ingest, report=report)
                how = f"gunicorn, {INGEST_CLIENTS} clients"
                results.append(Measure(size, INGEST, how, {}, 0, 0, rate, rate))
                report(progress_line(results[-1]))
            # Last: they move the orders' days past the real clock's (see `new_day`).
            for result in new_day_measures(
                counter, board=board, boards=boards, programmer=middle, size=size, repeat=repeat
            ):
                results.append(result)
                report(progress_line(result))
    return results

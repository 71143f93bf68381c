"""A bound on the solves one web process records at once (issue 36).

A solve holds its thread while MongoDB moves its programmer on every board, and a burst of
judges' reports could take every thread of a worker, so the pages queued behind them. Each
process lets `SOLVES_CONCURRENT_MAX` solves in at once (fewer than gunicorn's threads, so a
page always finds one); past it a solve waits a moment for a slot, then is turned away with
`SolvesBusy` *before anything is written*, for the API to answer 503 with Retry-After and the
answer form to say so. A retry finds the slot free, and an idempotent retry counts once.

A semaphore per process, not a shared counter: what it protects is this process's threads.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING

from django.conf import settings

if TYPE_CHECKING:
    from .models import Problem

# A slot freed this soon (a solve ending) is taken; longer, and a refused solve would hold its
# thread waiting, the very thing the bound is for.
WAIT_SECONDS = 0.05
RETRY_AFTER_SECONDS = 1


class SolvesBusy(Exception):
    """Every solve slot of this process is taken: nothing was written; retry after
    `retry_after` seconds."""

    retry_after = RETRY_AFTER_SECONDS


@functools.cache
def _slots(size: int) -> threading.BoundedSemaphore:
    # Made at first use (in the worker, after any fork); one per size, so a test that changes
    # the setting gets its own.
    return threading.BoundedSemaphore(size)


@contextmanager
def solve_slot() -> Iterator[None]:
    """Hold one of this process's solve slots for the block, or raise `SolvesBusy` (having
    waited `WAIT_SECONDS` at most) without running it."""
    slots = _slots(settings.SOLVES_CONCURRENT_MAX)
    if not slots.acquire(timeout=WAIT_SECONDS):
        raise SolvesBusy(
            f"{settings.SOLVES_CONCURRENT_MAX} solves are being recorded by this process"
        )
    try:
        yield
    finally:
        slots.release()


def answer_slot(*, problem: Problem, answer: str) -> AbstractContextManager[None]:
    """A solve slot for an answer from a form when it is right (it is recorded as a solve);
    a wrong answer is one small insert and needs none."""
    return solve_slot() if problem.accepts(answer) else nullcontext()

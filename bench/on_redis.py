"""The same reads and a forward-dated solve on Redis sorted sets (`--redis URL`).

Why a module of its own: DESIGN.md compares the engine with the obvious alternative, one sorted
set per board day; these timings sit beside the in-process rows of the same names, so the ratio
shows. Only the bench talks to Redis this way (production uses it as a cache).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from solutions import selectors
from solutions.models import Board

from .counting import timed


def redis_bench(url: str, *, board: Board, size: int, repeat: int) -> dict[str, float]:
    """Median milliseconds of the reads and a forward-dated solve on Redis sorted sets holding the
    same number of programmers, one sorted set per board day (the comparison DESIGN.md makes)."""
    import redis  # production's cache client; only the bench talks to Redis this way

    client = redis.Redis.from_url(url)
    key = "bench:board"
    _redis_board_fill(client, key, size)
    timings = {}
    for name, operation in _redis_operations(client, key, size).items():
        timings[name], _p95 = timed(operation, repeat)
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
    """The reads and the solve of `in_process.bench_operations`, on the sorted set `key`."""
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

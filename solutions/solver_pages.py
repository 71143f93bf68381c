"""A page of a problem's solvers in solve order, at a cost that does not grow with them.

`solvers` keeps every counted solver in a chunk per problem and UTC minute, sorted, and counts
above the chunks: the problem's document counts each day's solvers, a day's index each minute's.
A page walks down them: the day counts (one `_id` read) say which days hold the page's offsets,
those days' indexes (one `$in` read) which minutes, and those minutes' chunks are read sliced on
the server, the first from its offset (``find_one``), the others from their start (one `$in`
read). Four commands at most, and the bytes of one page plus the indexes of the days it spans (a
page spans at most `limit` days and `limit` minutes), whatever the number of solvers.

A move changes the counts before the chunk, so while one is under way (or until the repair
finishes a crashed one) a page near it may be a solver short or shifted by one, as the count is.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from . import mongo, solvers
from .solvers import Solver

Key = TypeVar("Key", bound=Hashable)


@dataclass(frozen=True)
class SolversPage:
    """Solvers `offset` onwards of a problem's `total`, in solve order."""

    total: int
    offset: int
    solvers: list[Solver]


def solvers_page(*, slug: str, offset: int, limit: int) -> SolversPage:
    """Solvers `offset` to `offset + limit` of a problem, in solve order, and how many it has:
    its day counts, the indexes of the days holding those offsets, then the chunks of the
    minutes holding them (four reads at most, see above)."""
    stats = mongo.problem_stats().find_one({"_id": slug}, {"days": 1}) or {}
    days = _counted(stats.get("days", {}))
    total = sum(count for _, count in days)
    wanted_days = _holding(days, offset, limit)
    if not wanted_days:
        return SolversPage(total=total, offset=offset, solvers=[])
    minutes = _minutes(slug, [day for day, _ in wanted_days])
    # The first day's skip is an offset into the minutes of the days read, which start with it.
    wanted = _holding(minutes, wanted_days[0][1], limit)
    found = _chunks_read(slug, wanted, limit) if wanted else []
    return SolversPage(total=total, offset=offset, solvers=found)


def _counted(counts: dict[str, int]) -> list[tuple[int, int]]:
    """(key, count) of the keys (days or minutes) that count somebody, in order."""
    return sorted((int(key), count) for key, count in counts.items() if count > 0)


def _holding(counts: Iterable[tuple[Key, int]], offset: int, limit: int) -> list[tuple[Key, int]]:
    """(key, from which of its solvers) of each key whose solvers hold offsets `offset` to
    `offset + limit`, given each key's count in solve order."""
    wanted: list[tuple[Key, int]] = []
    before = 0
    for key, count in counts:
        if before + count > offset and before < offset + limit:
            wanted.append((key, max(0, offset - before)))
        before += count
    return wanted


def _minutes(slug: str, days: list[int]) -> list[tuple[tuple[int, int], int]]:
    """((day, minute), its count) of each minute of these days with solvers, in order: one
    `$in` read of the days' indexes, their counts alone."""
    ids = [solvers.day_id(slug, day) for day in days]
    indexes = mongo.problem_days().find({"_id": {"$in": ids}}, {"m": 1})
    by_id = {index["_id"]: index.get("m", {}) for index in indexes}
    return [
        ((day, minute), count)
        for day, key in zip(days, ids, strict=True)
        for minute, count in _counted(by_id.get(key, {}))
    ]


def _chunks_read(slug: str, wanted: list[tuple[tuple[int, int], int]], limit: int) -> list[Solver]:
    """`limit` solvers at most from these chunks ((day, minute), from which), in order: the
    first sliced from its offset, the others from their start in one `$in` read."""
    ((day, minute), skip), rest = wanted[0], wanted[1:]
    first = mongo.problem_solvers().find_one(
        {"_id": solvers.chunk_id(slug, day, minute)}, {"s": {"$slice": [skip, limit]}}
    )
    found = solvers.solvers_from((first or {}).get("s", []))
    if rest and len(found) < limit:
        ids = [solvers.chunk_id(slug, *key) for key, _ in rest]
        chunks = mongo.problem_solvers().find(
            {"_id": {"$in": ids}}, {"s": {"$slice": limit - len(found)}}
        )
        by_id = {chunk["_id"]: chunk.get("s", []) for chunk in chunks}
        for key in ids:
            found += solvers.solvers_from(by_id.get(key, []))
    return found[:limit]

"""The order structure alone, in memory, at a million, 25 million and 100 million members.

Why it exists: the tree of manifests (`leaderboard.tree`) promises that a page, a place, a rank
and a move read and write one node a level and one or two sets, so that their cost barely moves
from a million members to a hundred million (one more level is one more node). `manage.py bench`
measures the site through MongoDB at sizes a test machine can seed; this measures the structure
where no database could be seeded in a minute, and shows what each operation touches:

- **bytes** are the BSON size of every document a real reader or writer would read and write:
  the root, each node on the path and the sets. Nodes are kept as the documents the store writes
  (`node_document`, the fields of `order_documents.manifest_document` with the `_id`) and
  decoded as `order_documents.manifest_decode` decodes them, readers asking only for the columns
  a page reads (the histogram at the root only: below it nobody uses a node's).
  Only the bytes count, not the commands that would carry them;
- **time** is the median and 95th percentile of `repeat` runs of the pure work: decoding the
  documents read, descending, applying moves, encoding the documents written. Making up a set's
  records (which stands for the database's reply) and counting bytes are left out.

A hundred million records do not fit in memory, so the order is built from what sets *would*
hold: member n is `record_at(n)`, monotonic in listing order (scores fall in groups that widen
with n, about 460 scores at 100M like a real board's long tail; inside a score group the
later-numbered member reached it later; handles are n in base 36, so the separators of any two
members differ). Each set's manifest entry is computed arithmetically, the tree is built over
them with `tree.tree_build`, and a set's records are made from `record_at` when an operation
reads it. Moves apply to the documents read, never to the built order, so every run starts from
the same state. No database: the documents are only encoded, as the store would send them.

Its parts: `members` (who member n is), `documents` (the documents as stored, their bytes),
`order` (the order built from them, and the ledger of what a run read and wrote), `operations`
(a page, a place, a rank, a fold); this module runs them at each size and prints the table.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from solutions.leaderboard import sets

from .documents import bson_size
from .members import record_at
from .operations import (
    PAGE_SIZE,
    histogram_read,
    moves_fold,
    page_read,
    place_read,
    random_moves,
    solve_moves,
)
from .order import Ledger, Order

FOLD_MOVES = 1_024  # the moves a journal holds before it is folded


@dataclass(frozen=True)
class Row:
    """One operation at one size: the levels of nodes (the root's included), the documents and
    bytes of a run (the median run's, for those that vary) and its time."""

    members: int
    operation: str
    levels: int
    reads: int
    read_bytes: int
    writes: int
    written_bytes: int
    median_ms: float
    p95_ms: float


def _operations(order: Order, rng: random.Random) -> dict[str, Callable[[], object]]:
    last = max(order.size - PAGE_SIZE, 0)
    return {
        "page at offset 0": lambda: _page_checked(order, 0),
        "page in the middle": lambda: _page_checked(order, order.size // 2),
        "last page": lambda: _page_checked(order, last),
        "a member's place": lambda: _place_checked(order, rng.randrange(order.size)),
        "histogram (a rank)": lambda: histogram_read(order),
        "one move": lambda: moves_fold(order, random_moves(order, rng, 1)),
        f"fold of {FOLD_MOVES:,} moves": lambda: moves_fold(
            order, random_moves(order, rng, min(FOLD_MOVES, order.size // 2))
        ),
        f"fold of {FOLD_MOVES:,} solves": lambda: moves_fold(
            order, solve_moves(order, rng, min(FOLD_MOVES, order.size // 2))
        ),
    }


def _page_checked(order: Order, offset: int) -> None:
    """A page read, checked against `record_at` (untimed): the order holds what it claims."""
    page = page_read(order, offset)
    with order.untimed():
        if page != [record_at(n) for n in range(offset, min(offset + PAGE_SIZE, order.size))]:
            raise AssertionError(f"the page at {offset} is not members {offset} onwards")


def _place_checked(order: Order, n: int) -> None:
    with order.untimed():
        record = record_at(n)
    if (found := place_read(order, record)) != n:
        raise AssertionError(f"member {n} found at {found}: the order is not what it claims")


def _measure(order: Order, operation: str, run: Callable[[], object], repeat: int) -> Row:
    ledgers, seconds = [], []
    for _ in range(repeat):
        order.ledger = Ledger()
        started = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - started - order.ledger.untimed)
        ledgers.append(order.ledger)
    ledger = sorted(ledgers, key=lambda lg: sum(lg.read) + sum(lg.written))[(repeat - 1) // 2]
    return Row(
        members=order.size,
        operation=operation,
        levels=order.levels,
        reads=len(ledger.read),
        read_bytes=sum(ledger.read),
        writes=len(ledger.written),
        written_bytes=sum(ledger.written),
        median_ms=statistics.median(seconds) * 1000,
        p95_ms=_p95(seconds) * 1000,
    )


def _p95(values: list[float]) -> float:
    return sorted(values)[math.ceil(0.95 * len(values)) - 1]


def structure_bench(sizes: list[int], repeat: int, seed: int = 22) -> list[Row]:
    """For each size: the bulk build (every document it writes, and how long it took), then each
    operation `repeat` times."""
    rows = []
    for size in sizes:
        started = time.perf_counter()
        order = Order(size)
        built = time.perf_counter() - started
        rows.append(_build_row(order, built))
        rng = random.Random(seed)
        for operation, run in _operations(order, rng).items():
            rows.append(_measure(order, operation, run, repeat))
        del order
    return rows


def _build_row(order: Order, seconds: float) -> Row:
    nodes = sum(bson_size(d) for d in order.documents.values())
    return Row(
        members=order.size,
        operation="bulk build (all sets and nodes)",
        levels=order.levels,
        reads=0,
        read_bytes=0,
        writes=len(order.documents) + -(-order.size // sets.SET_FILL),
        written_bytes=nodes + order.sets_bytes,
        median_ms=seconds * 1000,
        p95_ms=seconds * 1000,
    )


def structure_table(rows: list[Row]) -> str:
    """The rows as a Markdown table."""
    lines = [
        "| members | operation | levels | docs read | bytes read | docs written | bytes written"
        " | median ms | p95 ms |",
        "|---:|:---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r.members:,} | {r.operation} | {r.levels} | {r.reads:,} | {r.read_bytes:,}"
        f" | {r.writes:,} | {r.written_bytes:,} | {r.median_ms:,.3f} | {r.p95_ms:,.3f} |"
        for r in rows
    ]
    return "\n".join(lines) + "\n"

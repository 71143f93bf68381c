"""What the structure bench measures on an order: a page, a place, a rank, and a fold of moves.

Each reads and writes through the `Order`, as the engine's reader and writer would through
MongoDB: the same documents, the same fields. Moves apply to the documents read, never to the
built order, so every run starts from the same state.
"""

from __future__ import annotations

import bisect
import random

from solutions.leaderboard import encoding, maths, moving, sets, tree

from .documents import (
    HISTOGRAM_FIELDS,
    NODE_FIELDS,
    ORDER,
    PAGE_FIELDS,
    gone_update,
    node_document,
    set_document,
)
from .members import LATER, REACHED, SCORE_TOP, key_at, record_at, score_group
from .order import Order

PAGE_SIZE = 50


def page_read(order: Order, offset: int, limit: int = PAGE_SIZE) -> list[bytes]:
    """`limit` records from 0-based `offset`: down the levels by the entries' lengths
    (`Manifest.set_at`), then the one or two sets holding them (and the next leaf, for a page
    that crosses one's end)."""
    root, records = order.read(ORDER, PAGE_FIELDS), []
    while len(records) < limit:
        node, inside = root, offset + len(records)
        while node.level and (found := node.set_at(inside)) is not None:
            index, inside = found
            node = order.child(node, index, NODE_FIELDS)
        if (found := node.set_at(inside)) is None:
            break
        index, inside = found
        wanted = node.sets_covering(index, inside, limit - len(records))
        blobs = order.sets_read({node.set_id(i) for i in wanted})
        got = [r for i in wanted for r in encoding.records_of(blobs[node.set_id(i)])]
        records += got[inside : inside + limit - len(records)]
    return records


def place_read(order: Order, record: bytes) -> int | None:
    """A member's 0-based place: down the levels by separator (`Manifest.set_for`), adding the
    members of the entries before, then one set."""
    node, before = order.read(ORDER, PAGE_FIELDS), 0
    while True:
        index = node.set_for(record)
        if index < 0:
            return None
        before += node.offset_of_set(index)
        if not node.level:
            break
        node = order.child(node, index, NODE_FIELDS)
    set_id = node.set_id(index)
    records = encoding.records_of(order.sets_read({set_id})[set_id])
    position = bisect.bisect_left(records, record)
    if position == len(records) or records[position] != record:
        return None
    return before + position


def histogram_read(order: Order) -> dict[int, int]:
    """The day's histogram, which ranks anybody: the root alone."""
    return order.read(ORDER, HISTOGRAM_FIELDS).histogram


def moves_fold(order: Order, moves: list[moving.Move]) -> sets.Manifest:
    """What a fold reads and writes, as `order_writes.manifests_move` does it on an order no earlier
    try of the fold wrote: the root, the nodes the moves reach a level at a time
    (`tree.nodes_missing`), the versions and gone counts of the sets they reach at the leaves
    (`tree.leaves_reached`), the sets to read whole (`moving.sets_plan`: those taking their
    arrivals in) in one read; then the moves applied at the leaves (`moving.moves_apply`: the
    sets members only leave get a gone list), each changed node's entry recomputed upwards
    (`tree.tree_apply`) and the root settled (`tree.root_settle`). Returns the root as written
    (the order itself stays as built, with no gone lists)."""
    root = order.read(ORDER)
    children: dict[int, sets.Manifest] = {}
    while missing := tree.nodes_missing(root, moves, children):
        children.update({node_id: order.read(order.node_id(node_id)) for node_id in missing})
    loaded, leaving = _leaf_sets_read(order, tree.leaves_reached(root, moves, children))
    trash: list[int] = []

    def leaf_apply(_leaf_id: int, leaf: sets.Manifest, routed: list[moving.Move]) -> None:
        trash.extend(_leaf_moves_apply(order, leaf, routed, loaded, leaving))

    rewrite = tree.NodesRewrite()
    if root.level:
        tree.tree_apply(root, moves, children, leaf_apply, rewrite)
    else:
        leaf_apply(0, root, moves)
    tree.root_settle(root, rewrite)
    for node_id, node in rewrite.written.items():
        order.write(node_document(order.node_id(node_id), node))
    root.version += 1
    root.trash = trash + rewrite.dropped  # deleted by the next writer
    order.write(node_document(ORDER, root))
    return root


def _leaf_sets_read(
    order: Order, leaves: list[tuple[sets.Manifest, list[moving.Move]]]
) -> tuple[dict[int, bytes], set[int]]:
    """What a fold reads of the sets its moves reach: every one's version and gone count, then
    in one read the sets taking arrivals in (whole). Returns those sets' records by id, and the
    sets members only leave (they get a gone list)."""
    order.versions_read(
        {set_id for leaf, routed in leaves for set_id in moving.sets_reached(leaf, routed)}
    )
    whole: set[int] = set()
    leaving: set[int] = set()
    for leaf, routed in leaves:
        read, _fold, gone = moving.sets_plan(leaf, routed, {})
        whole |= read
        leaving |= gone
    return order.sets_read(whole), leaving


def _leaf_moves_apply(
    order: Order,
    leaf: sets.Manifest,
    routed: list[moving.Move],
    loaded: dict[int, bytes],
    leaving: set[int],
) -> list[int]:
    """A leaf's moves applied to its sets, and their writes noted: the sets rewritten and the
    gone lists pushed. Returns the sets it leaves to delete."""
    fold = moving.sets_to_fold(leaf, routed)
    rewrite = moving.moves_apply(leaf, loaded, routed, fold & set(loaded), leaving)
    for set_id, (version, blob) in rewrite.written.items():
        order.write(set_document(set_id, version, blob))
    for set_id, (version, records) in rewrite.gone.items():
        order.write(gone_update(set_id, version, records))
    return rewrite.dropped


def solve_moves(order: Order, rng: random.Random, count: int) -> list[moving.Move]:
    """`count` programmers each solving once more: one score up, reached after everybody who has
    that score, so each joins the end of the score's run of members (where solves put them)."""
    moves = []
    with order.untimed():
        late = 2**maths.TIME_BITS - 1 - (REACHED + LATER)
        for n in rng.sample(range(order.size), count):
            key = (SCORE_TOP - score_group(n) + 1) << maths.TIME_BITS | late
            moves.append(moving.Move(record_at(n), record_at(n, key=key)))
    return moves


def random_moves(order: Order, rng: random.Random, count: int) -> list[moving.Move]:
    """`count` programmers each leaving their place for one beside another member, at random."""
    moves = []
    with order.untimed():
        for n in rng.sample(range(order.size), count):
            beside = rng.randrange(order.size - 1)
            beside += beside >= n  # never the mover: they would not move
            moves.append(moving.Move(record_at(n), record_at(n, key=key_at(beside))))
    return moves

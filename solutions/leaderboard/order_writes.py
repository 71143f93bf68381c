"""Writing the orders: a batch's moves folded into many orders at once, and orders built whole.

A fold (`manifests_move`) reads the roots, the nodes the moves reach a level at a time (see
`tree`), then the sets they touch, and writes the changed sets and nodes in one bulk, then the
roots in another: a fixed number of commands whatever the number of orders. What it writes
follows `orders`' rule of shared documents: a set or node is written anew (see `rewrites`) unless
only this order's root can list it (`_exclusive`), and only then changed in place (a gone list,
pushed at the version checked) or deleted from its trash. A root is compare-and-swapped on its
version (`manifests_swap`), so a writer that outlived its lease can only leave documents that
nothing lists (`orders.OrdersConflict`).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping

from bson import Binary
from pymongo import DeleteOne, InsertOne, ReplaceOne, UpdateOne
from pymongo.errors import BulkWriteError

from .. import mongo
from . import maths, moving, orders, rewrites, sets, tree
from .order_documents import manifest_decode, manifest_document, set_records


def manifests_move(
    folding: dict[str, tuple[int, list[moving.Move]]], frontiers: Mapping[str, int | None]
) -> None:
    """Fold moves into many orders with a fixed number of commands: read the roots, the nodes
    the moves reach a level at a time (see `tree`), then the sets they touch (`$in` reads),
    write the changed sets and nodes (one bulk), then the roots (one bulk). `folding`: {order:
    (the journal epoch, its moves)}; a root that holds that epoch already (a fold stopped midway
    wrote it) is left as it is; `frontiers`: {board: its frontier day}, which says what each
    order may change in place (`_exclusive`). Only the lease holder writes; still, no set or
    node is ever written over (each written is a new document under a new id, and a gone list is
    pushed only at the version checked), and only a root, compare-and-swapped on its version,
    makes them
    listed: an applier that outlived its lease can only leave documents that nothing lists
    (`orders.OrdersConflict`)."""
    manifests = orders.manifests_read(folding)
    by_order: dict[str, list[moving.Move]] = {}
    for order, (epoch, moves) in folding.items():
        if moves and manifests[order].folded < epoch:
            manifests[order].folded = epoch
            by_order[order] = moves
    if not by_order:
        return
    nodes = _nodes_read(manifests, by_order)
    reached = {
        order: tree.leaves_reached(manifests[order], moves, nodes[order])
        for order, moves in by_order.items()
    }
    frontier_of = {order: frontiers.get(orders.order_parts(order)[0]) for order in by_order}
    wanted, leaving = _sets_planned(manifests, reached, frontier_of)
    stored = _sets_read(wanted)
    set_writes, swaps = [], []
    for order, moves in by_order.items():
        root, below = manifests[order], nodes[order]
        mine = functools.partial(_exclusive, order, frontier=frontier_of[order])
        writes, swap = _order_move(order, root, below, stored[order], moves, leaving[order], mine)
        set_writes += writes
        swaps.append(swap)
    _sets_write(set_writes)
    manifests_swap(swaps)


def _sets_write(writes: list) -> None:
    """A fold's set and node writes in one bulk: each gone list pushed must meet the version it
    checked, and no document may be there already (else `orders.OrdersConflict`)."""
    if not writes:
        return
    expected_matches = sum(isinstance(write, UpdateOne) for write in writes)
    try:
        result = orders.order_sets().bulk_write(writes, ordered=False)
    except BulkWriteError as error:
        raise mongo.conflict_or_fault(
            error, orders.OrdersConflict, "a set was written since it was read"
        ) from error
    if result.matched_count < expected_matches:
        raise orders.OrdersConflict("a set changed since it was read")


def _exclusive(order: str, set_id: int, frontier: int | None) -> bool:
    """Whether no other root than this order's can list this set or node: one of an all-time
    order, or one born on the order's own day while that day is the frontier (no later day
    was copied from it yet). Only those are changed in place or deleted (see `orders`)."""
    day_key = orders.order_parts(order)[1]
    if day_key == maths.ALL_TIME_KEY:
        return True
    return frontier is not None and rewrites.born_of(set_id) == int(day_key) == frontier


def _nodes_read(
    roots: dict[str, sets.Manifest], by_order: dict[str, list[moving.Move]]
) -> dict[str, dict[int, sets.Manifest]]:
    """{order: {node id: node}} of every node the moves reach below the roots: one `$in` read a
    level for all orders at once (`tree.nodes_missing`), whole, for writing."""
    nodes: dict[str, dict[int, sets.Manifest]] = {order: {} for order in by_order}
    while wanted := [
        (order, node_id)
        for order, moves in by_order.items()
        for node_id in tree.nodes_missing(roots[order], moves, nodes[order])
    ]:
        found = _docs_of(wanted)
        for (order, node_id), doc in found.items():
            nodes[order][node_id] = manifest_decode(doc)  # each order its own copy
            nodes[order][node_id].born = roots[order].born  # what it writes is the order's
        if len(found) < len(wanted):  # only a writer that outlived its lease deletes nodes
            raise orders.OrdersConflict("a node listed in an order is missing")
    return nodes


def _docs_of(
    listed: Iterable[tuple[str, int]], fields: dict | None = None
) -> dict[tuple[str, int], dict]:
    """{(order, set or node id): its document} of those stored, in `$in` reads: a document two
    days' orders share (see `orders`) is read once for both."""
    by_doc: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for order, set_id in listed:
        by_doc[orders.set_doc_id(order, set_id)].append((order, set_id))
    return {
        place: doc
        for doc in orders.by_ids(orders.order_sets(), by_doc, fields)
        for place in by_doc[doc["_id"]]
    }


Leaves = list[tuple[sets.Manifest, list[moving.Move]]]


def _sets_planned(
    roots: dict[str, sets.Manifest],
    reached: dict[str, Leaves],
    frontier_of: Mapping[str, int | None],
) -> tuple[set[tuple[str, int]], dict[str, set[int]]]:
    """The sets a fold reads whole ({(order, set id)}) and those members leave
    by a gone list ({order: set ids}), leaf by leaf (`moving.sets_plan`). A gone list takes a
    member out unseen, so it is written only where the fold is sure what each set holds: every
    set it reaches has the version its leaf lists (one read of their versions and gone counts
    alone) and no leaf was written by an earlier try of the same fold (a node keeps the epoch
    of the fold that wrote it, as a root does). Elsewhere every set a member leaves or joins is
    read whole: a member is taken out only if it is there, and put in only if it is not (an
    earlier try may have written the node, and the sets it lists, with the moves done). A set
    another day's root may list too (not `_exclusive`) is never left by a gone list either: it
    is read whole and written anew."""
    gone_counts, unsure = _sets_checked(reached)
    wanted: set[tuple[str, int]] = set()
    leaving: dict[str, set[int]] = {order: set() for order in reached}
    for order, leaves in reached.items():
        root = roots[order]  # its `folded` is the fold's epoch already
        sure = order not in unsure and all(
            leaf is root or leaf.folded < root.folded for leaf, _routed in leaves
        )
        counts = gone_counts[order] if sure else None
        for leaf, routed in leaves:
            ids = leaf.set_ids()
            shared = {s for s in ids if not _exclusive(order, s, frontier_of[order])}
            whole, _fold, gone = moving.sets_plan(leaf, routed, counts, shared)
            leaving[order] |= gone
            wanted.update((order, s) for s in whole - set(leaf.inline))
    return wanted, leaving


def _sets_checked(reached: dict[str, Leaves]) -> tuple[dict[str, dict[int, int]], set[str]]:
    """({order: {set id: how many gone records its document lists}} of every set the leaves
    reach, the orders where one of them has not the version its leaf lists): one read of their
    versions and gone counts alone."""
    listed: dict[tuple[str, int], int] = {}  # (order, set id): the version its leaf lists
    for order, leaves in reached.items():
        for leaf, routed in leaves:
            for set_id in moving.sets_reached(leaf, routed) - set(leaf.inline):
                listed[order, set_id] = leaf.set_version(leaf.index_of(set_id))
    found = _docs_of(listed, {"v": 1, "n": 1})
    gone_counts: dict[str, dict[int, int]] = defaultdict(dict)
    unsure = set()
    for (order, set_id), version in listed.items():
        stored = found.get((order, set_id), {})
        gone_counts[order][set_id] = stored.get("n", 0)
        if stored.get("v") != version:
            unsure.add(order)
    return gone_counts, unsure


def _sets_read(wanted: set[tuple[str, int]]) -> dict[str, dict[int, tuple[int, bytes]]]:
    """{order: {set id: (version, records blob)}} of the sets `wanted` ({(order, set id)}), in
    `$in` reads; a set listed but not stored reads as (None, b"")."""
    stored: dict[str, dict[int, tuple[int, bytes]]] = defaultdict(dict)
    for (order, set_id), doc in _docs_of(wanted).items():
        stored[order][set_id] = (doc["v"], set_records(doc))
    for order, set_id in wanted:
        stored[order].setdefault(set_id, (None, b""))
    return stored


def _order_move(
    order: str,
    root: sets.Manifest,
    nodes: dict[int, sets.Manifest],
    stored: dict[int, tuple[int, bytes]],
    moves: list,
    leaving: set[int],
    mine: Callable[[int], bool],
) -> tuple[list, tuple[str, int, dict]]:
    """The set and node writes and the root swap that apply `moves` to one order: at its sets
    (`_leaf_move`; members leave the sets of `leaving` by a gone list) and, above them, at the
    nodes the moves reach (`tree.tree_apply`), each node stamped with the fold's epoch. Of the
    sets and nodes it stops listing, those that are `mine` (listed by no other root) go to its
    trash, deleted by its next fold; the others are left to the prune."""
    expected = root.version
    writes: list = [DeleteOne({"_id": orders.set_doc_id(order, s)}) for s in root.trash]
    trash: list[int] = []

    def leaf_apply(_leaf_id: int, leaf: sets.Manifest, routed: list) -> None:
        writes.extend(_leaf_move(order, leaf, stored, routed, trash, leaving, leaf is root))

    rewrite = tree.NodesRewrite()
    if root.level == 0:
        leaf_apply(0, root, moves)
    else:
        tree.tree_apply(root, moves, nodes, leaf_apply, rewrite)
    tree.root_settle(root, rewrite)
    for node_id, node in rewrite.written.items():  # new documents, like sets (see `tree`)
        node.folded = root.folded
        writes.append(
            InsertOne({"_id": orders.set_doc_id(order, node_id), **manifest_document(node)})
        )
    root.version += 1
    # Sets and nodes no longer listed are deleted by the next writer, if no other root lists them.
    root.trash = [dropped for dropped in trash + rewrite.dropped if mine(dropped)]
    return writes, (order, expected, manifest_document(root))


def _leaf_move(
    order: str,
    leaf: sets.Manifest,
    stored: dict[int, tuple[int, bytes]],
    moves: list,
    trash: list[int],
    leaving: set[int],
    may_inline: bool,
) -> list:
    """The set writes that apply `moves` to the sets of a node of level 0 (or a root of level 0,
    which may keep a small order's one set inside itself), the sets it drops added to `trash`:
    a set read whole is written whole, as a new document (see `moving`); a set of `leaving` gets
    the records that left it pushed on its gone list, at the version checked."""
    missing = {s for s, (version, _blob) in stored.items() if version is None}
    mine = {**leaf.inline, **{s: vb for s, vb in stored.items() if s not in missing}}
    moving.manifest_repair(leaf, mine)
    was_inline = set(leaf.inline)
    loaded = {s: blob for s, (_v, blob) in mine.items()} | dict.fromkeys(missing, b"")
    fold = moving.sets_to_fold(leaf, moves)  # (again: a repair may have changed it)
    rewrite = moving.moves_apply(leaf, loaded, moves, fold & set(loaded), leaving)
    leaf.inline = _inlined(leaf, rewrite) if may_inline else {}
    writes: list = [
        InsertOne({"_id": orders.set_doc_id(order, set_id), "v": version, "r": Binary(blob)})
        for set_id, (version, blob) in rewrite.written.items()
        if set_id not in leaf.inline
    ]
    for set_id, (version, records) in rewrite.gone.items():
        change = {
            "$set": {"v": version},
            "$push": {"g": {"$each": [Binary(record) for record in records]}},
            "$inc": {"n": len(records)},
        }
        writes.append(
            UpdateOne({"_id": orders.set_doc_id(order, set_id), "v": version - 1}, change)
        )
    # Sets no longer listed (a set kept inside the manifest was never stored).
    trash += [s for s in rewrite.dropped if s not in was_inline]
    return writes


def _inlined(manifest: sets.Manifest, rewrite: rewrites.Rewrite) -> dict[int, tuple[int, bytes]]:
    """The set kept inside the manifest: the only one of an order of at most INLINE_MAX."""
    if len(manifest) != 1 or manifest.length(0) > orders.INLINE_MAX:
        return {}
    only = manifest.set_id(0)
    found = rewrite.written.get(only) or manifest.inline.get(only)
    return {only: found} if found else {}


def manifests_swap(swaps: list[tuple[str, int, dict]]) -> None:
    """Compare-and-swap manifests on their version (a journal's: `journals.journals_swap`): one
    that somebody else changed first (only an applier that outlived its lease can) keeps the
    newer writer's state, and the moves stay pending (`orders.OrdersConflict`)."""
    operations = [
        InsertOne({"_id": order, **document})
        if expected == 0
        else ReplaceOne({"_id": order, "v": expected}, document)
        for order, expected, document in swaps
    ]
    try:
        result = orders.orders().bulk_write(operations, ordered=False)
    except BulkWriteError as error:
        raise mongo.conflict_or_fault(
            error, orders.OrdersConflict, "a manifest was created meanwhile"
        ) from error
    if result.matched_count + result.inserted_count < len(operations):
        raise orders.OrdersConflict("a manifest changed since it was read")


def orders_write(built: dict[str, tuple[sets.Manifest, rewrites.Rewrite]]) -> None:
    """Store orders built in bulk (rebuilds), replacing whatever was there: each root, its
    nodes when it lists more than `tree.NODE_MAX` sets, and its sets."""
    set_writes, manifest_writes = [], []
    for order, (manifest, rewrite) in built.items():
        manifest.inline = _inlined(manifest, rewrite)
        set_writes += [
            InsertOne({"_id": orders.set_doc_id(order, s), "v": v, "r": Binary(blob)})
            for s, (v, blob) in rewrite.written.items()
            if s not in manifest.inline
        ]
        set_writes += [
            InsertOne({"_id": orders.set_doc_id(order, node_id), **manifest_document(node)})
            for node_id, node in tree.tree_build(manifest).items()
        ]
        manifest_writes.append(InsertOne({"_id": order, **manifest_document(manifest)}))
    for start in range(0, len(set_writes), 100):  # sets of up to 80 KB: 8 MB a command
        orders.order_sets().bulk_write(set_writes[start : start + 100], ordered=False)
    for start in range(0, len(manifest_writes), 1_000):
        orders.orders().bulk_write(manifest_writes[start : start + 1_000], ordered=False)

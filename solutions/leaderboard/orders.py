"""The orders: the listing order of every board day, as sorted entry sets with a manifest.

**Orders** (``orders`` and ``order_sets``): the listing order of each (board, day, group), as
sorted entry sets with a manifest (see `sets`); the manifest's histogram is the day's rank data.
A manifest is one document of ``orders`` (the **root**, under ``board|day|scope``), a set or a
node of its tree one of ``order_sets`` (what they hold: `order_documents`); the boards' journals
share ``orders`` with the roots (see `journals`), and `reading` reads a day's order with its
journal laid over it. A group ranklist's records name groups by id: a group's scope is kept by
its id in ``group_names``.

**Only the days a reader can see.** Orders are kept up to each board's **frontier**: today, and
tomorrow once it is prepared, in the last hour of today (see `day_change`). A solve moves its
programmer in the orders of the days up to the frontier only; the sums of later days stay in the
entries, for the forecast. A new day's orders are **copies of the day before's roots**, which
list the same nodes and sets, then changed by the moves the day brings (see `day_change`).

**Shared documents, written anew.** Sets and nodes are never written over (see `moving`): a set
or node changed is a new document. Each one's id carries the day whose order wrote it (its birth
day, `moving.new_set_id`), and its `_id` is ``board|birth day|scope|id`` whichever day's root
lists it. Only the frontier day's order may change its own documents in place (a set's gone
list) or delete those it no longer lists (its trash): those are listed by no other root, as no
later day was copied from it yet. Any other day's order, and the frontier's order for what it
inherited, writes every set it changes anew and leaves the old document to the prune, which
deletes by birth day (`orders_prune`): a member moves within a board's span of days, so no
kept root lists a document born before the history kept minus the span.

Why `_id` reads: the embedded server (SecantusDB 0.7, the default and the test server) never uses
a wildcard index (``keys.$**`` is kept as a plain index on the literal path, so every
``keys.<day>`` query scans the collection), does not push a limit into an index scan (a range
with sort and limit decodes every document of the range first), and its ``findAndModify`` on an
existing document scans the whole collection. `_id` point reads and writes, ``$in`` on `_id`,
and binary values stay fast on it at any size, and on every other MongoDB-compatible engine.
What costs there is the number of documents a command touches (most of a millisecond each, in
one Python process), so a solve writes a handful of documents whatever the board's size.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping

from bson import Binary
from pymongo import DeleteOne, InsertOne, ReplaceOne, UpdateOne
from pymongo.collection import Collection
from pymongo.errors import BulkWriteError

from .. import mongo
from . import days_kept, groups, maths, moving, sets, tree
from .order_documents import NODE, manifest_decode, manifest_document, set_records

# SecantusDB checks every document an `$in` on `_id` finds against the whole list, in Python: n
# ids cost n² comparisons (600 ids: a quarter of a second). Writers read by `$in` in at least
# IN_READS commands of at most IN_MAX ids (the same number of commands for any single solve).
IN_READS = 4
IN_MAX = 40
INLINE_MAX = 128  # an order this small keeps its one set inside its manifest: one write moves it


class OrdersConflict(RuntimeError):
    """Another writer changed a set or manifest first (an applier that outlived its lease): the
    moves stay pending for the next applier."""


# --- collections --------------------------------------------------------------------------------


def orders() -> Collection:
    return mongo.get_db()["orders"]


def order_sets() -> Collection:
    return mongo.get_db()["order_sets"]


def group_names() -> Collection:
    """The scope of each group a ranklist holds, by its id (see `groups`): ``{_id: id, scope}``."""
    return mongo.get_db()["group_names"]


# --- manifests and sets --------------------------------------------------------------------------


def order_id(board_slug: str, day_key: str, scope: str = "") -> str:
    """The `_id` of a board day's manifest; `scope` is a group (``country:BD``) or everybody."""
    return f"{board_slug}|{day_key}|{scope}"


def order_parts(order: str) -> tuple[str, str, str]:
    """(board slug, day key, scope) of an order's id (a scope may hold ``|``: it comes last)."""
    board_slug, day_key, scope = order.split("|", 2)
    return board_slug, day_key, scope


def order_born(order: str) -> int:
    """The birth day of what an order writes: its day, or 0 for an all-time order."""
    day_key = order_parts(order)[1]
    return 0 if day_key == maths.ALL_TIME_KEY else int(day_key)


def _set_doc_id(order: str, set_id: int) -> str:
    """The `_id` of a set or a node listed by an order (see `tree`), both in ``order_sets``:
    named by the day that wrote it, whichever day's root lists it (see above)."""
    board_slug, day_key, scope = order_parts(order)
    if day_key != maths.ALL_TIME_KEY:
        day_key = str(moving.born_of(set_id))
    return f"{board_slug}|{day_key}|{scope}|{set_id}"


def _exclusive(order: str, set_id: int, frontier: int | None) -> bool:
    """Whether no other root than this order's can list this set or node: one of an all-time
    order, or one born on the order's own day while that day is the frontier (no later day
    was copied from it yet). Only those are changed in place or deleted (see above)."""
    day_key = order_parts(order)[1]
    if day_key == maths.ALL_TIME_KEY:
        return True
    return frontier is not None and moving.born_of(set_id) == int(day_key) == frontier


def _by_ids(collection: Collection, ids: Iterable, fields: dict | None = None) -> Iterator[dict]:
    """The documents with these `_id`s (the `fields` asked for, else whole), in `$in` reads of a
    few dozen ids (see IN_READS)."""
    wanted = list(ids)
    if not wanted:
        return
    reads = max(min(IN_READS, len(wanted)), -(-len(wanted) // IN_MAX))
    size = -(-len(wanted) // reads)
    for start in range(0, len(wanted), size):
        part = wanted[start : start + size]
        # One batch each: the server leaves a cursor open when a batch ends exactly at its size.
        yield from collection.find({"_id": {"$in": part}}, fields, batch_size=len(part) + 1)


def manifests_read(order_ids: Iterable[str]) -> dict[str, sets.Manifest]:
    """Whole manifests, for writers."""
    wanted = list(order_ids)
    found = {doc["_id"]: doc for doc in _by_ids(orders(), wanted)}
    manifests = {order: manifest_decode(found.get(order)) for order in wanted}
    for order, manifest in manifests.items():
        manifest.born = order_born(order)
    return manifests


def manifest_read(order: str, fields: dict) -> sets.Manifest:
    """One manifest, with the columns `fields` asks for and the journal epoch it holds (`folded`):
    one `_id` read."""
    return manifest_decode(orders().find_one({"_id": order}, {**fields, "folded": 1}))


def root_exists(order: str) -> bool:
    return orders().find_one({"_id": order}, {"_id": 1}) is not None


def node_read(order: str, node_id: int) -> sets.Manifest | None:
    """A node of an order's tree with the columns a reader uses (None: not stored)."""
    document = order_sets().find_one({"_id": _set_doc_id(order, node_id)}, NODE)
    return None if document is None else manifest_decode(document)


def sets_fetch(order: str, set_ids: Iterable[int]) -> dict[int, tuple[int, bytes]]:
    """{set id: (version, records blob)} of the stored sets (one `$in` read)."""
    wanted = {_set_doc_id(order, s): s for s in set_ids}
    if not wanted:
        return {}
    found = order_sets().find({"_id": {"$in": list(wanted)}})
    return {wanted[doc["_id"]]: (doc["v"], set_records(doc)) for doc in found}


# --- moving orders ------------------------------------------------------------------------------


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
    (`OrdersConflict`)."""
    manifests = manifests_read(folding)
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
    frontier_of = {order: frontiers.get(order_parts(order)[0]) for order in by_order}
    wanted, leaving = _sets_planned(manifests, reached, frontier_of)
    stored = _sets_read(wanted)
    set_writes, swaps, expected_matches = [], [], 0
    for order, moves in by_order.items():
        root, below = manifests[order], nodes[order]
        mine = functools.partial(_exclusive, order, frontier=frontier_of[order])
        writes, swap = _order_move(order, root, below, stored[order], moves, leaving[order], mine)
        set_writes += writes
        expected_matches += sum(isinstance(w, UpdateOne) for w in writes)
        swaps.append(swap)
    if set_writes:
        try:
            result = order_sets().bulk_write(set_writes, ordered=False)
        except BulkWriteError as error:
            raise mongo.conflict_or_fault(
                error, OrdersConflict, "a set was written since it was read"
            ) from error
        if result.matched_count < expected_matches:
            raise OrdersConflict("a set changed since it was read")
    manifests_swap(swaps)


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
            raise OrdersConflict("a node listed in an order is missing")
    return nodes


def _docs_of(
    listed: Iterable[tuple[str, int]], fields: dict | None = None
) -> dict[tuple[str, int], dict]:
    """{(order, set or node id): its document} of those stored, in `$in` reads: a document two
    days' orders share (see above) is read once for both."""
    by_doc: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for order, set_id in listed:
        by_doc[_set_doc_id(order, set_id)].append((order, set_id))
    return {
        place: doc for doc in _by_ids(order_sets(), by_doc, fields) for place in by_doc[doc["_id"]]
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
    writes: list = [DeleteOne({"_id": _set_doc_id(order, s)}) for s in root.trash]
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
        writes.append(InsertOne({"_id": _set_doc_id(order, node_id), **manifest_document(node)}))
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
        InsertOne({"_id": _set_doc_id(order, set_id), "v": version, "r": Binary(blob)})
        for set_id, (version, blob) in rewrite.written.items()
        if set_id not in leaf.inline
    ]
    for set_id, (version, records) in rewrite.gone.items():
        change = {
            "$set": {"v": version},
            "$push": {"g": {"$each": [Binary(record) for record in records]}},
            "$inc": {"n": len(records)},
        }
        writes.append(UpdateOne({"_id": _set_doc_id(order, set_id), "v": version - 1}, change))
    # Sets no longer listed (a set kept inside the manifest was never stored).
    trash += [s for s in rewrite.dropped if s not in was_inline]
    return writes


def _inlined(manifest: sets.Manifest, rewrite: moving.Rewrite) -> dict[int, tuple[int, bytes]]:
    """The set kept inside the manifest: the only one of an order of at most INLINE_MAX."""
    if len(manifest) != 1 or manifest.length(0) > INLINE_MAX:
        return {}
    only = manifest.set_id(0)
    found = rewrite.written.get(only) or manifest.inline.get(only)
    return {only: found} if found else {}


def manifests_swap(swaps: list[tuple[str, int, dict]]) -> None:
    """Compare-and-swap manifests on their version (a journal's: `journals.journals_swap`): one
    that somebody else changed first (only an applier that outlived its lease can) keeps the
    newer writer's state, and the moves stay pending (`OrdersConflict`)."""
    operations = [
        InsertOne({"_id": order, **document})
        if expected == 0
        else ReplaceOne({"_id": order, "v": expected}, document)
        for order, expected, document in swaps
    ]
    try:
        result = orders().bulk_write(operations, ordered=False)
    except BulkWriteError as error:
        raise mongo.conflict_or_fault(
            error, OrdersConflict, "a manifest was created meanwhile"
        ) from error
    if result.matched_count + result.inserted_count < len(operations):
        raise OrdersConflict("a manifest changed since it was read")


def orders_write(built: dict[str, tuple[sets.Manifest, moving.Rewrite]]) -> None:
    """Store orders built in bulk (rebuilds), replacing whatever was there: each root, its
    nodes when it lists more than `tree.NODE_MAX` sets, and its sets."""
    set_writes, manifest_writes = [], []
    for order, (manifest, rewrite) in built.items():
        manifest.inline = _inlined(manifest, rewrite)
        set_writes += [
            InsertOne({"_id": _set_doc_id(order, s), "v": v, "r": Binary(blob)})
            for s, (v, blob) in rewrite.written.items()
            if s not in manifest.inline
        ]
        set_writes += [
            InsertOne({"_id": _set_doc_id(order, node_id), **manifest_document(node)})
            for node_id, node in tree.tree_build(manifest).items()
        ]
        manifest_writes.append(InsertOne({"_id": order, **manifest_document(manifest)}))
    for start in range(0, len(set_writes), 100):  # sets of up to 80 KB: 8 MB a command
        order_sets().bulk_write(set_writes[start : start + 100], ordered=False)
    for start in range(0, len(manifest_writes), 1_000):
        orders().bulk_write(manifest_writes[start : start + 1_000], ordered=False)


def orders_prune(board_slug: str, window: maths.Window, today: int) -> int:
    """Delete the roots of the board's days older than the history kept, and the sets and nodes
    born before them by more than the board's span: no page shows them and no move touches them
    again (`entries.Behind.moves`), so without this every day would leave its orders behind for
    good. A set or node is shared by the days after its birth until its members move, which each
    does within the span (a rolling window's days have no solve in common with the day a span
    before; a calendar period starts empty), and a day's moves are folded into its root by the
    next day's preparation at the latest (`day_change`), so no root kept lists a document born
    two days and a span before it. One range on `_id` per collection: epoch days have five
    digits from 1997 to 2243, so day names sort like the days. Background work (beat). Returns
    how many days' roots went."""
    oldest = days_kept.history_from(today)
    old_roots = {"$gte": f"{board_slug}|0", "$lt": f"{board_slug}|{oldest}"}
    removed = orders().delete_many({"_id": old_roots}).deleted_count
    born_before = oldest - window.span - 2
    order_sets().delete_many(
        {"_id": {"$gte": f"{board_slug}|0", "$lt": f"{board_slug}|{born_before}"}}
    )
    return removed


def orders_forget(board_slug: str) -> None:
    """Drop every order of a board (before a rebuild writes them anew): rebuild-time, it scans."""
    prefix = {"$regex": f"^{board_slug}\\|"}
    orders().delete_many({"_id": prefix})
    order_sets().delete_many({"_id": prefix})


# --- the names of the ranked groups --------------------------------------------------------------


def group_names_write(scopes: Iterable[str]) -> None:
    """Keep the scope of these groups under their ids (`groups.group_id`), so that a ranklist's
    page can name them: a batch writes those its programmers join (one bulk, only when somebody
    joins a group), a rebuild all of them."""
    writes = [
        ReplaceOne({"_id": groups.group_id(scope)}, {"scope": scope}, upsert=True)
        for scope in sorted(set(scopes))
    ]
    for start in range(0, len(writes), 1_000):
        group_names().bulk_write(writes[start : start + 1_000], ordered=False)


def group_names_read(ids: Iterable[int]) -> dict[int, str]:
    """{group id: scope} of these groups (one `$in` read)."""
    wanted = list(ids)
    if not wanted:
        return {}
    found = group_names().find({"_id": {"$in": wanted}}, batch_size=len(wanted) + 1)
    return {doc["_id"]: doc["scope"] for doc in found}

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

**Shared documents, written anew.** Sets and nodes are never written over (see `rewrites`): a set
or node changed is a new document. Each one's id carries the day whose order wrote it (its birth
day, `rewrites.new_set_id`), and its `_id` is ``board|birth day|scope|id`` whichever day's root
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

from collections.abc import Iterable, Iterator

from pymongo import ReplaceOne
from pymongo.collection import Collection

from .. import mongo
from . import days_kept, groups, maths, rewrites, sets
from .order_documents import NODE, manifest_decode, set_records

# SecantusDB checks every document an `$in` on `_id` finds against the whole list, in Python: n
# ids cost n² comparisons (600 ids: a quarter of a second). Writers read by `$in` in at least
# IN_READS commands of at most IN_MAX ids (the same number of commands for any single solve).
IN_READS = 4
IN_MAX = 40
GROUP_NAMES_PER_READ = 100  # the largest page of groups, named in one read
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


def set_doc_id(order: str, set_id: int) -> str:
    """The `_id` of a set or a node listed by an order (see `tree`), both in ``order_sets``:
    named by the day that wrote it, whichever day's root lists it (see above)."""
    board_slug, day_key, scope = order_parts(order)
    if day_key != maths.ALL_TIME_KEY:
        day_key = str(rewrites.born_of(set_id))
    return f"{board_slug}|{day_key}|{scope}|{set_id}"


def by_ids(collection: Collection, ids: Iterable, fields: dict | None = None) -> Iterator[dict]:
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
    found = {doc["_id"]: doc for doc in by_ids(orders(), wanted)}
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
    document = order_sets().find_one({"_id": set_doc_id(order, node_id)}, NODE)
    return None if document is None else manifest_decode(document)


def sets_fetch(order: str, set_ids: Iterable[int]) -> dict[int, tuple[int, bytes]]:
    """{set id: (version, records blob)} of the stored sets (one `$in` read)."""
    wanted = {set_doc_id(order, s): s for s in set_ids}
    if not wanted:
        return {}
    found = order_sets().find({"_id": {"$in": list(wanted)}})
    return {wanted[doc["_id"]]: (doc["v"], set_records(doc)) for doc in found}


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
    """{group id: scope} of these groups: a page's in one `$in` read, more (a day's preparation
    names every group of the day before, thousands of organizations) GROUP_NAMES_PER_READ a
    read, as one `$in` of them all would cost the embedded server the square of their number."""
    wanted, names = list(ids), {}
    for start in range(0, len(wanted), GROUP_NAMES_PER_READ):
        part = wanted[start : start + GROUP_NAMES_PER_READ]
        found = group_names().find({"_id": {"$in": part}}, batch_size=len(part) + 1)
        names |= {doc["_id"]: doc["scope"] for doc in found}
    return names

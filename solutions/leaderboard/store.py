"""The engine on MongoDB: entries, the order of every board day, and how a solve moves them.

This is the only module that names an entry field path or a board collection.

**Entries** (``entries.<board>``), one document per (board, programmer)::

    {_id: <programmer id>, handle, groups: ["country:BD", "org:..."],
     days: {"<epoch day>": count}, last: {"<epoch day>": latest solve time that day},
     sums: {"<day>": score}, keys: {"<day>": sort key},
     applied: [ids of the latest solves counted], rev: <changes so far>,
     trimmed: <the day old days were last trimmed>,
     placed: {keys, handle, groups, rev}}  # what the orders hold for this programmer

A solve runs one aggregation-pipeline update on the entry (`solve_pipeline`) that adds the day's
count and recomputes the forward-dated sums and sort keys of every day the solve touches (see
`maths`), trimming, once a day, days that can no longer change anything. The update is idempotent
by the solve's id (``applied``): a retry after a fault counts nothing twice. Real MongoDB can
serve "the board of day D" from the wildcard indexes on ``sums.$**`` and ``keys.$**`` (the
seed's design).

**Orders** (``orders`` and ``order_sets``): the listing order of each (board, day, group), as
sorted entry sets with a manifest (see `sets`); the manifest's histogram is the day's rank data.
Orders are kept forward-dated like the sums, so a new day needs no cron, no rebuild and no scan:
its order was written by the solves that made it.

**Journals** (``<board>|journal`` in ``orders``): a solve moves its programmer in every order of
every day it touches (38 days on the three default boards, twice with a group), and writing
dozens of manifests is what a solve would cost, each some 80 KB at a million programmers. So a
solve records its moves in one document per board instead: for each order, each programmer's
pair (the record the manifest holds, the record they hold now). A programmer moving again
replaces their pair, so a journal grows with the programmers who moved, not with their solves.
Once a journal holds JOURNAL_MAX programmers' pairs, the batch that filled it folds it into the
manifests and sets and empties it in a new **epoch**; each manifest records the epoch it holds
(``folded``).

**Reading** a page, a rank or a neighbourhood is the day's part of the journal, the manifest
(asking only for the columns it uses) and at most one read of sets, all by `_id`, at any size.
The journal's pairs are laid over the manifest as departures and arrivals (`sets.Manifest
.journal_lay`) unless the manifest already holds that epoch.

**Group ranklists** (scope ``groups:country`` or ``groups:org`` of each board day): the groups
themselves ranked against each other, one record a group computed from its own order's
histogram (see `groups`), kept as an order like the others. The batch that moves programmers
reads, with the journals, the histograms of the groups' orders it moves, and records in the same
journal write each group's move from the record of its histogram before the batch to the one
after (`_group_moves`); folds, pages and prunes then treat them as any order. A group's scope is
kept by its id in ``group_names``.

Why `_id` reads: the embedded server (SecantusDB 0.7, the default and the test server) never uses
a wildcard index (``keys.$**`` is kept as a plain index on the literal path, so every
``keys.<day>`` query scans the collection), does not push a limit into an index scan (a range
with sort and limit decodes every document of the range first), and its ``findAndModify`` on an
existing document scans the whole collection. `_id` point reads and writes, ``$in`` on `_id`,
and binary values stay fast on it at any size, and on every other MongoDB-compatible engine.
What costs there is the number of documents a command touches (most of a millisecond each, in
one Python process), so a solve writes a handful of documents whatever the board's size.

**How a solve moves the orders.** The entry changes first (atomically, once); orders follow.
Each entry records in ``placed`` what the orders hold for it and at which ``rev`` of the entry.
One applier at a time moves orders, whoever holds the lease of the ``appliers`` document: it
moves each programmer from ``placed`` to their current keys in the journals, then updates
``placed`` (never back to an older ``rev``), then folds the journals that are full. A solve that
finds the lease free takes it, listing its programmer as pending in the same write, and moves
them; one that finds it held lists its programmer as pending there and waits: the next holder
moves everybody pending in one batch, so solves that arrive together cost one batch. The solves
of one process wait together (`turns`): one of them lists, takes the lease and looks for all. A
batch that stops anywhere leaves its programmers pending, and every step can be done again (a
journal pair keeps the record the manifest holds; a fold marks its journal first, and the next
batch finishes it before adding anything), so a retry, the next holder or the repair task
carries on (a solve is marked applied in the ``solves`` log only once its orders moved): nothing
is lost and nothing moves twice.
"""

from __future__ import annotations

import bisect
import datetime as dt
import secrets
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from bson import Binary
from django.conf import settings
from django.utils import timezone
from pymongo import (
    ASCENDING,
    DeleteOne,
    IndexModel,
    InsertOne,
    ReplaceOne,
    ReturnDocument,
    UpdateOne,
)
from pymongo.collection import Collection
from pymongo.errors import BulkWriteError, ConnectionFailure, DuplicateKeyError

from .. import mongo
from . import groups, maths, sets, turns

APPLIED_KEPT = 64  # solve ids an entry remembers: far more than can be in flight at once
APPLY_LEASE = dt.timedelta(seconds=30)  # longer than any batch takes; frees a crashed applier
# How long a solve waits for another request to apply it: longer than the lease, so a solve
# outlives an applier that died holding it (its server was killed under it) and applies the
# batch itself. Its answer then means that it is listed, with no repair task needed.
APPLY_WAIT_SECONDS = 40.0
APPLY_POLL_SECONDS = (0.015, 0.05)  # a waiter's first and longest pause between looks
# SecantusDB checks every document an `$in` on `_id` finds against the whole list, in Python: n
# ids cost n² comparisons (600 ids: a quarter of a second). Writers read by `$in` in at least
# IN_READS commands of at most IN_MAX ids (the same number of commands for any single solve).
IN_READS = 4
IN_MAX = 40
LEASE = "orders"  # the one applier document: every solve moves orders of every board
READ_RETRIES = 3
# An entry last trimmed this few days ago drops its old days by name (`_trimmed_today`): enough
# for a programmer who solves every few days; each name costs a little on every solve, as the
# embedded server checks the whole pipeline whichever branch runs.
TRIM_BY_NAME = 3
INLINE_MAX = 128  # an order this small keeps its one set inside its manifest: one write moves it
T = TypeVar("T")


class OrdersConflict(RuntimeError):
    """Another writer changed a set or manifest first (an applier that outlived its lease): the
    moves stay pending for the next applier."""


@dataclass(frozen=True)
class SolveEvent:
    """One counted solve, as the engine sees it."""

    solve_id: str
    programmer_id: int
    handle: str
    groups: tuple[str, ...]
    day: int
    value: int
    at: dt.datetime


def board_key(window: maths.Window, day: int) -> str:
    """The field name of a board day: the epoch day, or ``all`` for all-time boards."""
    return maths.ALL_TIME_KEY if window.is_all_time else str(day)


def history_from(today: int) -> int:
    """The oldest day whose final board is kept."""
    return today - settings.LEADERBOARD_HISTORY_DAYS


def counts_from(window: maths.Window, today: int) -> int:
    """The oldest daily count that a solve accepted today can still need."""
    return today - settings.LEADERBOARD_MAX_LATE_DAYS - window.span


def _today() -> int:
    return maths.epoch_day(timezone.now(), settings.LEADERBOARD_TIME_ZONE)


# --- collections and their indexes ------------------------------------------------------------


def entries(board_slug: str) -> Collection:
    # Board slugs are validated SlugFields, so they are safe in a collection name.
    return mongo.get_db()[f"entries.{board_slug}"]


def orders() -> Collection:
    return mongo.get_db()["orders"]


def order_sets() -> Collection:
    return mongo.get_db()["order_sets"]


def appliers() -> Collection:
    return mongo.get_db()["appliers"]


def group_names() -> Collection:
    """The scope of each group a ranklist holds, by its id (see `groups`): ``{_id: id, scope}``."""
    return mongo.get_db()["group_names"]


def board_indexes(board_slugs: Iterable[str] | None = None) -> dict[str, list[IndexModel]]:
    """The indexes of the boards' entries collections (every board when `board_slugs` is None):
    `sums.$**` and `keys.$**` serve per-day queries on real MongoDB (the seed's design). Nothing
    on a request path needs them (orders are read by `_id`), so they are built by the command,
    not at a process's first use."""
    if board_slugs is None:
        from ..models import Board  # the registry calls this once the apps are ready

        board_slugs = Board.objects.values_list("slug", flat=True)
    wildcard = [
        IndexModel([("sums.$**", ASCENDING)], name="sums_wildcard"),
        IndexModel([("keys.$**", ASCENDING)], name="keys_wildcard"),
    ]
    return {f"entries.{slug}": wildcard for slug in board_slugs}


# --- the entry update pipeline ----------------------------------------------------------------


def _field(name: str, document: str) -> dict:
    return {"$getField": {"field": name, "input": f"${document}"}}


def _trimmed(document: dict, oldest: int) -> dict:
    """The sub-document without the day keys older than `oldest`, looking at every key."""
    return {
        "$arrayToObject": {
            "$filter": {
                "input": {"$objectToArray": document},
                "cond": {"$gte": [{"$toInt": "$$this.k"}, oldest]},
            }
        }
    }


def _without_days(document: dict, days: range) -> dict:
    """The sub-document without these day keys (absent ones are no matter)."""
    for day in days:
        document = {"$setField": {"field": str(day), "input": document, "value": "$$REMOVE"}}
    return document


def _trimmed_today(document: str, oldest: int) -> dict:
    """`document` without the day keys older than `oldest`, done the first time the entry
    changes on a day (once trimmed for a day, nothing older than `oldest` can be added to it
    that day). The limits move a day a day, so an entry trimmed `$$since` days ago holds
    nothing older than `oldest - $$since`: within TRIM_BY_NAME days, those days are removed by
    name, which costs the embedded server half of what filtering every key does (`_trimmed`):
    3.5 against 6.7 ms for a 30-day entry with 90 days of history."""
    kept = {"$ifNull": [document, {}]}
    return {
        "$switch": {
            "branches": [
                {"case": {"$eq": ["$$since", 0]}, "then": kept},
                {
                    "case": {"$lte": ["$$since", TRIM_BY_NAME]},
                    "then": _without_days(kept, range(oldest - TRIM_BY_NAME, oldest)),
                },
            ],
            "default": _trimmed(kept, oldest),
        }
    }


def _key_tail(reached: dict) -> dict:
    """The time part of `maths.sort_key` as an aggregation expression."""
    seconds = {
        "$toLong": {"$floor": {"$divide": [{"$subtract": [reached, maths.KEY_EPOCH]}, 1000]}}
    }
    return {"$subtract": [2**maths.TIME_BITS - 1, seconds]}


def _key_of(score: dict | str, tail: dict | str) -> dict:
    """`maths.sort_key` as an aggregation expression, from the score and `_key_tail`."""
    return {"$add": [{"$multiply": [{"$min": [score, maths.MAX_SCORE]}, 2**maths.TIME_BITS]}, tail]}


def _key_expression(score: dict | str, reached: dict) -> dict:
    return _key_of(score, _key_tail(reached))


def _all_time_counting(event: SolveEvent) -> dict:
    key = maths.ALL_TIME_KEY
    total = {"$add": [{"$ifNull": [_field(key, "sums"), 0]}, event.value]}
    latest = {"$max": [{"$ifNull": [_field(key, "last"), event.at]}, event.at]}
    return {
        "$let": {
            "vars": {"total": total, "latest": latest},
            "in": {
                "sums": {key: "$$total"},
                "last": {key: "$$latest"},
                "keys": {key: _key_expression("$$total", "$$latest")},
            },
        }
    }


def _window_counting(window: maths.Window, event: SolveEvent, today: int) -> dict:
    """The day's count, then the sums and keys of every day the solve touches, each recomputed
    from the daily counts in its window. The counts of the days any of them can see are read
    once into an array, one field path a day as in the seed's pipeline, and the i-th day after
    the solve's sums a slice of it; the expression stays the same size for any window (the
    embedded server checks and evaluates expressions in Python)."""
    day = str(event.day)
    affected = window.affected_days(event.day)
    first = window.start(event.day)  # the first day any of them counts
    counted = range(first, min(affected[-1], max(today, event.day)) + 1)  # none after today
    if window.kind == maths.ROLLING:  # day i counts from `first` + i, `days` of them
        span = ["$$i", window.days]
    else:  # a calendar period: every day counts from its start
        span = [0, {"$add": ["$$i", event.day - first + 1]}]
    each_day = {"$range": [0, len(affected)]}
    windows = {"counts": [{"$ifNull": [f"$$days.{d}", 0]} for d in counted]}
    keys = _window_keys(windows, event, today, counted, span, each_day)
    scores = {
        "$map": {"input": each_day, "as": "i", "in": {"$sum": {"$slice": ["$$counts", *span]}}}
    }
    count = {"$add": [{"$ifNull": [_field(day, "days"), 0]}, event.value]}
    latest = {"$max": [{"$ifNull": [_field(day, "last"), event.at]}, event.at]}
    changed = _window_changed(window, [str(d) for d in affected], keys, today)
    return {
        "$let": {
            "vars": {
                "days": {"$mergeObjects": [{"$ifNull": ["$days", {}]}, {day: count}]},
                "last": {"$mergeObjects": [{"$ifNull": ["$last", {}]}, {day: latest}]},
                "latest": latest,
                "since": {"$subtract": [today, {"$ifNull": ["$trimmed", 0]}]},
            },
            "in": {
                "$let": {
                    "vars": windows,
                    "in": {"$let": {"vars": {"scores": scores}, "in": changed}},
                }
            },
        }
    }


def _window_keys(
    windows: dict, event: SolveEvent, today: int, counted: range, span: list, each_day: dict
) -> dict:
    """The sort keys of the days a solve touches, from their `$$scores`, adding to `windows`
    what they read. A solve of today is the latest of every window it touches, so every key
    takes its time (worked out once); a late one takes each day's latest time in its window."""
    if event.day >= today:
        windows["tail"] = _key_tail("$$latest")
        return {"$map": {"input": "$$scores", "in": _key_of("$$this", "$$tail")}}
    windows["times"] = [f"$$last.{d}" for d in counted]
    reached = {"$max": {"$slice": ["$$times", *span]}}
    key = _key_expression({"$arrayElemAt": ["$$scores", "$$i"]}, reached)
    return {"$map": {"input": each_day, "as": "i", "in": key}}


def _window_changed(window: maths.Window, names: list[str], keys: dict, today: int) -> dict:
    """The fields a counted solve sets: counts (trimmed once a day to those a solve can still
    need), and the sums and keys of the days `names` merged into the kept ones."""
    return {
        "days": _trimmed_today("$$days", counts_from(window, today)),
        "last": _trimmed_today("$$last", counts_from(window, today)),
        "sums": {
            "$mergeObjects": [
                _trimmed_today("$sums", history_from(today)),
                {"$arrayToObject": {"$zip": {"inputs": [names, "$$scores"]}}},
            ]
        },
        "keys": {
            "$mergeObjects": [
                _trimmed_today("$keys", history_from(today)),
                {"$arrayToObject": {"$zip": {"inputs": [names, keys]}}},
            ]
        },
        "trimmed": today,
    }


def solve_pipeline(window: maths.Window, event: SolveEvent, today: int) -> list[dict]:
    """The one atomic update that counts `event` on a board with this window, once: an entry
    that already lists the solve's id is left exactly as it is. One stage (the embedded server
    copies the document at each stage)."""
    counting = (
        _all_time_counting(event) if window.is_all_time else _window_counting(window, event, today)
    )
    applied = {"$ifNull": ["$applied", []]}
    changes = {
        "handle": event.handle,
        "groups": list(event.groups),
        "applied": {"$slice": [{"$concatArrays": [applied, [event.solve_id]]}, -APPLIED_KEPT]},
        "rev": {"$add": [{"$ifNull": ["$rev", 0]}, 1]},
    }
    seen = {"$in": [event.solve_id, applied]}
    counted = {"$mergeObjects": ["$$ROOT", counting, changes]}
    return [{"$replaceWith": {"$cond": [seen, "$$ROOT", counted]}}]


# --- entries ----------------------------------------------------------------------------------


def entry_count_solve(board_slug: str, window: maths.Window, event: SolveEvent, today: int) -> None:
    """Count a solve in the programmer's entry, once whatever the retries. Until its orders
    follow (`orders_catch_up`), the solve stays unapplied in the log, for a retry or the repair
    task to finish."""
    entries(board_slug).update_one(
        {"_id": event.programmer_id}, solve_pipeline(window, event, today), upsert=True
    )


def entry_read(board_slug: str, programmer_id: int, day_keys: Iterable[str] = ()) -> dict:
    """A programmer's entry (handle, groups, and the sums and keys of `day_keys`); {} if none."""
    projection = {"handle": 1, "groups": 1}
    for day_key in day_keys:
        projection |= {f"sums.{day_key}": 1, f"keys.{day_key}": 1}
    return entries(board_slug).find_one({"_id": programmer_id}, projection) or {}


def entry_key(entry: dict, day_key: str) -> int:
    """The sort key of a board day in an entry from `entry_read` (0: not on that board)."""
    return entry.get("keys", {}).get(day_key, 0)


def entry_sum(entry: dict, day_key: str) -> int:
    return entry.get("sums", {}).get(day_key, 0)


def entries_keys(
    board_slug: str, programmer_ids: Iterable[int], day_key: str, scope: str = ""
) -> dict[int, int]:
    """{programmer id: sort key} of a board day for those on it, in the group (one `$in`)."""
    found = entries(board_slug).find(
        {"_id": {"$in": list(programmer_ids)}}, {f"keys.{day_key}": 1, "groups": 1}
    )
    return {
        doc["_id"]: doc["keys"][day_key]
        for doc in found
        if entry_key(doc, day_key) > 0 and (not scope or scope in doc.get("groups", []))
    }


def entries_replace(programmer_id: int, documents: dict[str, dict | None]) -> None:
    """Set a programmer's entries ({board slug: entry computed from their solves, None: off the
    board}), keeping what the orders hold, then bring the orders along (only this programmer
    moves). The programmer is listed as pending first, so a crash right after still leaves the
    orders to the next applier."""
    marker = secrets.token_hex(8)
    _pending_add([_item(slug, programmer_id, marker) for slug in documents])
    for board_slug, document in documents.items():
        fields = document or {"handle": "", "groups": [], "sums": {}, "keys": {}}
        fields = {name: value for name, value in fields.items() if name not in ("_id", "rev")}
        unset = {name: "" for name in ("days", "last") if name not in fields}
        update = {"$set": fields, "$inc": {"rev": 1}, **({"$unset": unset} if unset else {})}
        entries(board_slug).update_one({"_id": programmer_id}, update, upsert=True)
    orders_catch_up([(slug, programmer_id) for slug in documents])


def placement(entry: dict) -> dict:
    """What the orders hold for an entry once it is placed: its keys, handle and groups, and
    the entry's revision they reflect."""
    return {
        "keys": entry.get("keys", {}),
        "handle": entry.get("handle", ""),
        "groups": entry.get("groups", []),
        "rev": entry.get("rev", 0),
    }


# --- manifests and sets --------------------------------------------------------------------------


def order_id(board_slug: str, day_key: str, scope: str = "") -> str:
    """The `_id` of a board day's manifest; `scope` is a group (``country:BD``) or everybody."""
    return f"{board_slug}|{day_key}|{scope}"


def _set_doc_id(order: str, set_id: int) -> str:
    return f"{order}|{set_id}"


# What each reader asks of a manifest: a page or a place needs the sets' lengths and last members
# (the journal's moves are laid into the sets by them), a rank only the histogram; writers read
# it all.
_PAGE = {"v": 1, "ids": 1, "vers": 1, "lens": 1, "lasts": 1, "hist": 1, "inline": 1, "arrivals": 1}
_HISTOGRAM = {"hist": 1}


def _manifest_decode(document: dict | None) -> sets.Manifest:
    """A manifest from its stored columns (see `manifest_document`), as far as they were read."""
    if document is None:
        return sets.Manifest()
    manifest = sets.Manifest(
        version=document.get("v", 0),
        ids=document.get("ids", b""),
        versions=document.get("vers", b""),
        lengths=document.get("lens", b""),
        lasts=document.get("lasts"),
        score_counts=document.get("nscores"),
        score_pairs=document.get("scores", b""),
        histogram=sets.histogram_unpack(document.get("hist", b"")),
        trash=document.get("trash", []),
        arrivals=_arrivals_unpack(document.get("arrivals", b"")),
    )
    manifest.folded = document.get("folded", -1)
    if document.get("inline") is not None and len(manifest) == 1:
        only = manifest.set_id(0)
        manifest.inline = {only: (manifest.set_version(0), bytes(document["inline"]))}
    return manifest


def _arrivals_unpack(packed: bytes) -> Iterator[tuple[bytes, int]]:
    width = 8 + sets.RECORD_BYTES
    for i in range(0, len(packed), width):
        yield packed[i + 8 : i + width], int.from_bytes(packed[i : i + 8], "big")


def _arrivals_pack(arrivals: dict[bytes, int]) -> bytes:
    return b"".join(arrivals[r].to_bytes(8, "big") + r for r in sorted(arrivals))


def manifest_document(manifest: sets.Manifest) -> dict:
    """A manifest as stored: one binary value for each column of its sets (id, version, length,
    separator of the last member, number of score counts), their score counts, the histogram,
    the records of a small order's one set, the sets to delete once no reader can still be on
    their way to them, and the arrivals (each with the id of its set)."""
    inline = next(iter(manifest.inline.values()), None)
    return {
        "v": manifest.version,
        "ids": Binary(bytes(manifest.ids)),
        "vers": Binary(bytes(manifest.versions)),
        "lens": Binary(bytes(manifest.lengths)),
        "lasts": Binary(bytes(manifest.lasts or b"")),
        "nscores": Binary(bytes(manifest.score_counts)),
        "scores": Binary(bytes(manifest.score_pairs)),
        "hist": Binary(sets.histogram_pack(manifest.histogram)),
        "inline": Binary(inline[1]) if inline else None,
        "trash": manifest.trash,
        "arrivals": Binary(_arrivals_pack(manifest.arrivals)),
        "folded": manifest.folded,
    }


def _by_ids(collection: Collection, ids: Iterable) -> Iterator[dict]:
    """The documents with these `_id`s, in `$in` reads of a few dozen ids (see IN_READS)."""
    wanted = list(ids)
    if not wanted:
        return
    reads = max(min(IN_READS, len(wanted)), -(-len(wanted) // IN_MAX))
    size = -(-len(wanted) // reads)
    for start in range(0, len(wanted), size):
        part = wanted[start : start + size]
        # One batch each: the server leaves a cursor open when a batch ends exactly at its size.
        yield from collection.find({"_id": {"$in": part}}, batch_size=len(part) + 1)


def manifests_read(order_ids: Iterable[str]) -> dict[str, sets.Manifest]:
    """Whole manifests, for writers."""
    wanted = list(order_ids)
    found = {doc["_id"]: doc for doc in _by_ids(orders(), wanted)}
    return {order: _manifest_decode(found.get(order)) for order in wanted}


def _manifest_read(board_slug: str, day_key: str, scope: str, fields: dict) -> sets.Manifest:
    """A board day's manifest as a reader sees it: with the moves of the board's journal that it
    does not hold yet laid over it. Two `_id` reads, the journal's part first: a fold writes the
    manifests before it empties the journal, so a part read before the manifest is either still
    to be laid (the manifest's `folded` is older than the part's epoch) or already in it."""
    epoch, pairs = _journal_part(board_slug, day_key, scope)
    order = order_id(board_slug, day_key, scope)
    manifest = _manifest_decode(orders().find_one({"_id": order}, {**fields, "folded": 1}))
    if manifest.folded < epoch:
        manifest.journal_lay(pairs)
    return manifest


def histogram_read(board_slug: str, day_key: str, scope: str = "") -> dict[int, int]:
    """{score: number of programmers} of one board day: two `_id` reads."""
    return _manifest_read(board_slug, day_key, scope, _HISTOGRAM).histogram


def _sets_fetch(order: str, set_ids: Iterable[int]) -> dict[int, tuple[int, bytes]]:
    """{set id: (version, records blob)} of the stored sets (one `$in` read)."""
    wanted = {_set_doc_id(order, s): s for s in set_ids}
    if not wanted:
        return {}
    found = order_sets().find({"_id": {"$in": list(wanted)}})
    return {wanted[doc["_id"]]: (doc["v"], bytes(doc["r"])) for doc in found}


class _Behind(Exception):
    """A set is newer than its manifest entry: a writer is between the two writes."""


def _records(order: str, manifest: sets.Manifest, indexes: Iterable[int], last_try: bool):
    """The records of the listed sets with their arrivals, in order. A set newer than the
    manifest means a writer is between writing it and the manifest: read again, or on the last
    try take the sets as they are and recompute the manifest's entries from them."""
    chosen = sorted(set(indexes))
    listed = {i: (manifest.set_id(i), manifest.set_version(i)) for i in chosen}
    external = [set_id for set_id, _v in listed.values() if set_id not in manifest.inline]
    stored = {**manifest.inline, **_sets_fetch(order, external)}
    if any(stored.get(set_id, (None,))[0] != version for set_id, version in listed.values()):
        if not last_try:
            raise _Behind
        sets.manifest_repair(manifest, stored)
    records: list[bytes] = []
    for set_id, _version in listed.values():
        written = sets.records_of(stored.get(set_id, (0, b""))[1])
        if departed := manifest.departures_of(set_id):
            written = [record for record in written if record not in departed]
        arrived = manifest.arrivals_of(set_id)
        records += sorted(written + arrived) if arrived else written
    return records


def _reading(read: Callable[[bool], T]) -> T:
    """Run a manifest-then-sets read, again if a writer was caught between its two writes."""
    for attempt in range(READ_RETRIES):
        try:
            return read(attempt == READ_RETRIES - 1)
        except _Behind:
            time.sleep(0.002 * (attempt + 1))
    raise AssertionError("unreachable: the last try never raises")


def order_page(
    board_slug: str, day_key: str, scope: str, offset: int, limit: int
) -> tuple[dict[int, int], list[sets.Member]]:
    """A board day's histogram and `limit` members from 0-based `offset`, in listing order: the
    manifest, then the one or two sets holding them (two `_id` reads at any offset and size)."""
    histogram, records = order_records(board_slug, day_key, scope, offset, limit)
    return histogram, [sets.Member.from_record(record) for record in records]


def order_records(
    board_slug: str, day_key: str, scope: str, offset: int, limit: int
) -> tuple[dict[int, int], list[bytes]]:
    """`order_page` as the records themselves (a group ranklist's are not programmers)."""
    order = order_id(board_slug, day_key, scope)

    def read(last_try: bool) -> tuple[dict[int, int], list[bytes]]:
        manifest = _manifest_read(board_slug, day_key, scope, _PAGE)
        first = manifest.set_at(offset)
        if first is None or limit <= 0:
            return manifest.histogram, []
        index, inside = first
        lengths = manifest.set_lengths()
        wanted, covered = [index], lengths[index] - inside
        while covered < limit and wanted[-1] + 1 < len(lengths):
            wanted.append(wanted[-1] + 1)
            covered += lengths[wanted[-1]]
        records = _records(order, manifest, wanted, last_try)
        return manifest.histogram, records[inside : inside + limit]

    return _reading(read)


def member_position(board_slug: str, day_key: str, scope: str, member: sets.Member) -> int | None:
    """A member's 0-based place in the listing order of a board day (None: not listed): the
    manifest, bisected with their sort bytes, then one set."""
    order = order_id(board_slug, day_key, scope)
    record = member.record()

    def read(last_try: bool) -> int | None:
        manifest = _manifest_read(board_slug, day_key, scope, _PAGE)
        index = manifest.set_for(record)
        if index < 0:
            return None
        records = _records(order, manifest, [index], last_try)
        position = bisect.bisect_left(records, record)
        if position >= len(records) or records[position] != record:
            return None
        return manifest.offset_of_set(index) + position

    return _reading(read)


def records_before(board_slug: str, day_key: str, scope: str, probe: bytes) -> int:
    """How many members of a board day's order sort before the bytes `probe` (a record's width):
    the manifest, bisected, then one set. Sets are cut only where separators differ, so every
    member of the sets before the one found sorts before `probe`, and none of those after."""
    order = order_id(board_slug, day_key, scope)

    def read(last_try: bool) -> int:
        manifest = _manifest_read(board_slug, day_key, scope, _PAGE)
        index = manifest.set_for(probe)
        if index < 0:
            return 0
        records = _records(order, manifest, [index], last_try)
        return manifest.offset_of_set(index) + bisect.bisect_left(records, probe)

    return _reading(read)


def members_in_order(board_slug: str, day_key: str, scope: str = "") -> Iterator[sets.Member]:
    """Every member of a board day in listing order, a few sets at a time (background work such
    as rank-history snapshots: its cost grows with the board, so never on a request)."""
    order = order_id(board_slug, day_key, scope)
    manifest = _manifest_read(board_slug, day_key, scope, _PAGE)
    for start in range(0, len(manifest), 16):
        chosen = range(start, min(start + 16, len(manifest)))
        for record in _records(order, manifest, chosen, last_try=True):
            yield sets.Member.from_record(record)


# --- the journal of each board ------------------------------------------------------------------

# Programmers' moves a board's journal holds before they are folded into orders. The moves of the
# groups in the ranklists ride along uncounted: a programmer with g groups makes 38 (1 + g) moves
# on the default boards and at most 38 g of groups, so they add at most 2/3 to a journal, and
# counting them would fold half as often again, each fold rewriting the same big manifests.
JOURNAL_MAX = 1024
_PAIR_WIDTH = 1 + 2 * sets.RECORD_BYTES  # which of the two is there, then gone and came


def journal_id(board_slug: str) -> str:
    """The `_id` of a board's journal, in the manifests' collection (after every day's name, so
    `orders_prune` leaves it)."""
    return f"{board_slug}|journal"


def _part_key(day_key: str, scope: str) -> str:
    """The journal field of one board day's order: the scope in hex, as a group's name is free
    text (an organization) and must never become a field path of its own."""
    return f"{day_key}_{scope.encode().hex()}"


def _part_order(key: str) -> tuple[str, str]:
    day_key, scope = key.split("_")
    return day_key, bytes.fromhex(scope).decode()


def _part_unpack(packed: bytes) -> dict[int, tuple[bytes | None, bytes | None]]:
    """{programmer id: (the record the manifest holds or None, the one they moved to or None)}."""
    part, width = {}, sets.RECORD_BYTES
    for i in range(0, len(packed), _PAIR_WIDTH):
        there, gone, came = (
            packed[i],
            packed[i + 1 : i + 1 + width],
            packed[i + 1 + width : i + _PAIR_WIDTH],
        )
        pair = (gone if there & 1 else None, came if there & 2 else None)
        part[sets.record_programmer(pair[0] or pair[1])] = pair
    return part


def _part_pack(part: dict[int, tuple[bytes | None, bytes | None]]) -> Binary:
    blank = bytes(sets.RECORD_BYTES)
    return Binary(
        b"".join(
            bytes([(gone is not None) | (came is not None) << 1])
            + (gone or blank)
            + (came or blank)
            for gone, came in part.values()
        )
    )


def _journal_part(board_slug: str, day_key: str, scope: str) -> tuple[int, list]:
    """(the journal's epoch, the (gone, came) pairs of one board day's order): one `_id` read of
    that part only."""
    key = _part_key(day_key, scope)
    document = orders().find_one({"_id": journal_id(board_slug)}, {"epoch": 1, f"p.{key}": 1})
    if document is None:
        return 0, []
    return document.get("epoch", 0), list(
        _part_unpack(document.get("p", {}).get(key, b"")).values()
    )


def _journal_move(part: dict, move: sets.Move) -> None:
    """Record a move in a part: a programmer keeps the record the manifest held before the part
    began (`gone`) and takes the new one, so moving again, or the same move twice, leaves one
    pair; moving back to what the manifest holds leaves none."""
    pid = sets.record_programmer(move.old if move.old is not None else move.new)
    gone = part[pid][0] if pid in part else move.old
    if gone == move.new:
        part.pop(pid, None)
    else:
        part[pid] = (gone, move.new)


def _journal_append(journal: dict, parts: dict[tuple[str, str], list[sets.Move]]) -> dict:
    """A journal with these moves recorded (the next version, to compare-and-swap)."""
    packed = dict(journal.get("p", {}))
    for (day_key, scope), moves in parts.items():
        key = _part_key(day_key, scope)
        part = _part_unpack(packed.get(key, b""))
        for move in moves:
            _journal_move(part, move)
        packed[key] = _part_pack(part)
    return {
        "v": journal.get("v", 0) + 1,
        "epoch": journal.get("epoch", 0),
        "folding": False,
        "n": sum(
            len(p) // _PAIR_WIDTH
            for key, p in packed.items()
            if not groups.is_ranklist(_part_order(key)[1])
        ),
        "p": packed,
    }


_JOURNAL = {"v": 1, "epoch": 1, "folding": 1, "n": 1, "p": 1}


def _journals_read(
    boards: Iterable[str], ranked: Iterable[str] = ()
) -> tuple[dict[str, dict], dict[str, sets.Manifest]]:
    """The journals of these boards (empty for one never written), and the histograms of the
    manifests `ranked` (groups' orders, whose ranklists the batch moves), in the same reads: one
    for a batch that moves nobody with a group, else `$in` reads of at most IN_MAX ids (the
    embedded server's `$in` costs the square of its ids). The two kinds of document share the
    collection and no field but `v`."""
    wanted = {journal_id(board): board for board in boards}
    ids = [*wanted, *ranked]
    found: dict[str, dict] = {}
    for start in range(0, len(ids), IN_MAX):
        part = ids[start : start + IN_MAX]
        fields = {**_JOURNAL, **_HISTOGRAM, "folded": 1}
        # One batch each: the server leaves a cursor open when a batch ends exactly at its size.
        found |= {
            doc["_id"]: doc
            for doc in orders().find({"_id": {"$in": part}}, fields, batch_size=len(part) + 1)
        }
    journals = {board: found.get(journal_id, {}) for journal_id, board in wanted.items()}
    return journals, {order: _manifest_decode(found.get(order)) for order in ranked}


def _journals_swap(before: dict[str, dict], after: dict[str, dict]) -> None:
    """Write the journals `after`, each over the version it had `before` (compare-and-swap, in
    one bulk with `_manifests_swap`)."""
    if not after:
        return
    _manifests_swap(
        [
            (
                journal_id(board),
                before[board].get("v", 0),
                {k: v for k, v in j.items() if k != "_id"},
            )
            for board, j in after.items()
        ]
    )


def _part_moves(packed: bytes) -> list[sets.Move]:
    """The moves that fold a journal's part into its order: each programmer out of the record
    the manifest holds and into their new one."""
    moves = []
    for gone, came in _part_unpack(packed).values():
        moves += [sets.Move(gone, None)] if gone is not None else []
        moves += [sets.Move(None, came)] if came is not None else []
    return moves


def _journals_fold(journals: dict[str, dict]) -> dict[str, dict]:
    """Move the journals' moves into the orders (`_manifests_move`: exact, as it reads the sets
    a member leaves) and empty them in a new epoch; returns them emptied. A journal is marked as
    folding first, so that nobody adds to it until it is emptied (a manifest that already holds
    its epoch ignores its part, so it would ignore anything added there too) and the next batch
    finishes a fold that stopped midway: it moves the same members from the same manifests
    (sets the stopped fold wrote are repaired into them as they are read, `manifest_repair`), so
    each is held once."""
    marked = {
        board: {**journal, "v": journal["v"] + 1, "folding": True}
        for board, journal in journals.items()
        if not journal.get("folding")
    }
    _journals_swap(journals, marked)
    oldest = history_from(_today())
    folding = {}
    for board, journal in journals.items():
        for key, packed in journal.get("p", {}).items():
            day_key, scope = _part_order(key)
            if day_key == maths.ALL_TIME_KEY or int(day_key) >= oldest:  # else pruned
                moves = _part_moves(packed)
                folding[order_id(board, day_key, scope)] = (journal.get("epoch", 0), moves)
    _manifests_move(folding)
    current = {**journals, **marked}
    emptied = {
        board: {"v": j["v"] + 1, "epoch": j.get("epoch", 0) + 1, "folding": False, "n": 0, "p": {}}
        for board, j in current.items()
    }
    _journals_swap(current, emptied)
    return emptied


# --- group ranklists ---------------------------------------------------------------------------


def _group_moves(
    journals: dict[str, dict],
    bases: dict[str, sets.Manifest],
    by_part: dict[str, dict[tuple[str, str], list[sets.Move]]],
) -> dict[str, dict[tuple[str, str], list[sets.Move]]]:
    """{board: {(day, ranklist scope): moves}}: every group whose order of a day this batch moves
    leaves the record its histogram gave before the batch for the one it gives after (see
    `groups`). Both histograms are the manifest's with the journal's part laid over it, before
    and after this batch's moves, as a reader would see them; so each ranklist holds, for every
    group, the record of the histogram readers see, and a batch moves it from there."""
    moves: dict[str, dict[tuple[str, str], list[sets.Move]]] = {}
    for board, parts in by_part.items():
        journal = journals[board]
        epoch, packed = journal.get("epoch", 0), journal.get("p", {})
        for (day_key, scope), member_moves in parts.items():
            kind = groups.kind_of(scope)
            if kind is None:
                continue
            base = bases[order_id(board, day_key, scope)]
            before = _part_unpack(packed.get(_part_key(day_key, scope), b""))
            after = dict(before)
            for move in member_moves:
                _journal_move(after, move)
            old = groups.record(scope, _histogram_laid(base, epoch, before.values()))
            new = groups.record(scope, _histogram_laid(base, epoch, after.values()))
            if old != new:
                place = (day_key, groups.ranklist_scope(kind))
                moves.setdefault(board, {}).setdefault(place, []).append(sets.Move(old, new))
    return moves


def _histogram_laid(base: sets.Manifest, epoch: int, pairs: Iterable) -> dict[int, int]:
    """The histogram of a manifest read for its histogram only, with a journal's part of that
    epoch laid over it unless it holds that epoch already (as `_manifest_read` does)."""
    manifest = sets.Manifest(histogram=base.histogram, lasts=None)
    if base.folded < epoch:
        manifest.journal_lay(pairs)
    return manifest.histogram


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


# --- moving the orders -------------------------------------------------------------------------


def _item(board_slug: str, programmer_id: int, tag: str) -> str:
    """A pending entry of the applier document, "board|id|tag": a programmer on a board, tagged
    by whoever listed them (so one request's listing is never mistaken for another's)."""
    return f"{board_slug}|{programmer_id}|{tag}"


def _item_parts(item: str) -> tuple[str, int, str]:
    """(board slug, programmer id, tag) of a pending entry made by `_item`."""
    board_slug, programmer_id, tag = item.split("|")
    return board_slug, int(programmer_id), tag


def _applier_update(update: dict) -> None:
    """Change the applier document, made on first use. Two first uses at once can both try to
    make it: the loser's update is simply applied again (each is idempotent)."""
    try:
        appliers().update_one({"_id": LEASE}, update, upsert=True)
    except DuplicateKeyError:
        appliers().update_one({"_id": LEASE}, update)


def _pending_add(items: list[str]) -> None:
    if items:
        _applier_update({"$addToSet": {"pending": {"$each": items}}})


def pending_clear(board_slug: str) -> None:
    """Forget the programmers pending on a board (its orders were just rebuilt from scratch)."""
    _applier_update({"$pull": {"pending": {"$regex": f"^{board_slug}\\|"}}})


def _lease_take(token: str, listed: list[str]) -> tuple[bool, list[str]]:
    """List `listed` as pending and take the lease if it is free (or expired), in one write:
    (whether this request now holds the lease, everything pending). A holder that stops midway
    leaves what it listed to the next one; a request that finds the lease held is listed for
    the holder's next batch by the same write. The applier collection holds one document, so
    even the embedded server's `findAndModify` is cheap."""
    now = timezone.now()
    free = {"$not": [{"$gt": [{"$ifNull": ["$until", None]}, now]}]}
    update = {
        "token": {"$cond": [free, token, "$token"]},
        "until": {"$cond": [free, now + APPLY_LEASE, "$until"]},
        "pending": {"$setUnion": [{"$ifNull": ["$pending", []]}, listed]},
    }
    document = None
    for _attempt in range(2):  # two first uses at once: the loser's write goes again
        try:
            document = appliers().find_one_and_update(
                {"_id": LEASE},
                [{"$set": update}],
                projection={"pending": 1, "token": 1},
                upsert=True,
                return_document=ReturnDocument.AFTER,
            )
            break
        except DuplicateKeyError:
            continue
    if document is None:
        # Under concurrent writers SecantusDB 0.7 can answer "nothing matched" to a
        # findAndModify that did its write: look, and list them if it did not.
        document = appliers().find_one({"_id": LEASE}, {"pending": 1, "token": 1}) or {}
        if document.get("token") != token and not set(listed) <= set(document.get("pending", [])):
            _pending_add(listed)
    return document.get("token") == token, list(document.get("pending", []))


def _lease_release(token: str, done: list[str] | None) -> None:
    """Give the lease back; `done`: what was moved (None: nothing, the batch failed), pulled
    from the pending entries."""
    update: dict = {"$set": {"until": None}}
    if done:
        update["$pullAll"] = {"pending": done}
    appliers().update_one({"_id": LEASE, "token": token}, update)


def _pending_now() -> tuple[set[str], bool]:
    """(everything pending, whether the lease is free): one `_id` read."""
    document = appliers().find_one({"_id": LEASE}, {"pending": 1, "until": 1}) or {}
    until = document.get("until")
    return set(document.get("pending", [])), until is None or until <= timezone.now()


@dataclass(frozen=True)
class Moved:
    """What a batch moved, for its finishers (`on_batch_moved`): the boards, and the tags of
    whoever listed the programmers (see `orders_catch_up`)."""

    boards: frozenset[str]
    tags: frozenset[str]


# What every batch does once its moves are written (`on_batch_moved`).
_BATCH_FINISHERS: list[Callable[[Moved], object]] = []


def on_batch_moved(finish: Callable[[Moved], object]) -> None:
    """Run `finish(moved)` in every batch that moves the orders, before the lease is given back
    and the batch's programmers leave the pending list: whatever a request needs done once its
    programmers moved (its solve marked applied) is done before any request of the batch can
    answer. A batch whose finisher fails leaves them all pending; the next batch moves them
    again (nothing changes) and finishes them."""
    if finish not in _BATCH_FINISHERS:
        _BATCH_FINISHERS.append(finish)


# This process's requests waiting for the orders; a storage fault of their driver fails them all.
_TURNS = turns.Turns(shared_failure=ConnectionFailure)


def orders_catch_up(wanted: Iterable[tuple[str, int]] = (), *, tag: str = "") -> None:
    """Bring the orders up to date with the entries of these (board slug, programmer id) pairs
    (only everything pending when empty). They are listed as pending, and whoever holds the
    lease next moves them with everybody pending, in one batch: this request if the lease is
    free, else it waits for a holder to move them (taking the lease in turn once it is free).
    The requests of one process wait together (`turns`): one of them lists them all, takes the
    lease and looks at the applier document for all of them.

    `tag` marks this request's programmers in the batch (a solve's id, say): the batch's
    finishers (`on_batch_moved`) do the work of every request in it at once. Waiting ends after
    APPLY_WAIT_SECONDS: whatever is still pending is moved by the next holder or the repair
    task."""
    token = secrets.token_hex(8)
    wanted = sorted(set(wanted))
    if not wanted:
        holder, pending = _lease_take(token, [])
        if holder:
            _batch_move(token, pending)
        return
    items = frozenset(_item(slug, pid, tag or token) for slug, pid in wanted)
    me = turns.Waiter(items, time.monotonic() + APPLY_WAIT_SECONDS)
    _TURNS.wait(me, lambda me: _drive(token, me))


def _drive(token: str, me: turns.Waiter) -> None:
    """Drive for every request of this process waiting for the orders, until `me` is settled or
    out of time: list them (taking the lease if it is free), move everybody pending while
    holding it, and otherwise look every few dozen milliseconds which of them another holder
    moved, taking the lease once it is free. Only a request listed before a look can be settled
    by it: one not listed yet is not pending because nobody listed it."""
    pause = APPLY_POLL_SECONDS[0]
    take = True
    while not me.settled and time.monotonic() < me.deadline:
        if take:
            waiting = _TURNS.unsettled()
            holder, pending = _lease_take(token, sorted({i for w in waiting for i in w.items}))
            _TURNS.mark_listed(waiting)
            if holder:
                _batch_move(token, pending)
                _TURNS.settle(set(pending).issuperset)  # `me` among them
                return
        time.sleep(pause)
        pause = min(pause * 1.5, APPLY_POLL_SECONDS[1])
        pending_now, free = _pending_now()
        _TURNS.settle(pending_now.isdisjoint)
        take = free or any(not w.listed for w in _TURNS.unsettled())


def _batch_move(token: str, pending: list[str]) -> None:
    """As the lease holder, move everybody pending, finish the batch (`on_batch_moved`) and give
    the lease back."""
    items = [_item_parts(item) for item in pending]
    moved = Moved(frozenset(board for board, *_ in items), frozenset(tag for *_, tag in items))
    try:
        _orders_apply({(board, pid) for board, pid, _tag in items})
        for finish in _BATCH_FINISHERS:
            finish(moved)
    except BaseException:
        # Everything stays pending for the next holder; after a fault, give up in bounded time.
        mongo.cleanup(lambda: _lease_release(token, None))
        raise
    _lease_release(token, pending)


def _records_placed(placed: dict | None, pid: int, oldest_day: int) -> dict[tuple[str, str], bytes]:
    """{(day, scope): record} of a placement: what the orders hold for it on each day kept."""
    if not placed:
        return {}
    scopes = ["", *placed.get("groups", [])]
    tail = sets.handle_bytes(placed["handle"], pid)
    records = {}
    for day_key, key in placed.get("keys", {}).items():
        if key > 0 and (day_key == maths.ALL_TIME_KEY or int(day_key) >= oldest_day):
            record = (sets.MAX_KEY - key).to_bytes(8, "big") + tail
            records.update({(day_key, scope): record for scope in scopes})
    return records


def _placement_moves(entry: dict, oldest_day: int) -> dict[tuple[str, str], sets.Move]:
    """{(day, scope): move} taking a programmer from what the orders hold (`placed`) to their
    current keys, handle and groups."""
    pid = entry["_id"]
    old = _records_placed(entry.get("placed"), pid, oldest_day)
    new = _records_placed(placement(entry), pid, oldest_day)
    return {
        place: sets.Move(old.get(place), new.get(place))
        for place in set(old) | set(new)
        if old.get(place) != new.get(place)
    }


_PLACEMENT = {"handle": 1, "groups": 1, "keys": 1, "rev": 1, "placed": 1}


def _orders_apply(wanted: set[tuple[str, int]]) -> None:
    """Move these (board slug, programmer id) in every order they are in, on every board at once:
    record the moves in the boards' journals (one read, one write), with the moves of the groups
    whose scores they change in the groups' ranklists (`_group_moves`), then what the orders hold
    for each programmer (never over a newer record of a later applier), then fold the journals
    that are full. In that sequence a batch that stops anywhere leaves its programmers pending
    with journals and records that the next batch carries on from: a journal's part keeps, for
    each programmer, the record the manifest holds, so moving them again from an older record
    changes nothing that matters; and a fold, which forgets what it moved, only ever follows the
    records of what it moves."""
    behind, by_part, named = _batch_moves(wanted)
    if not behind:
        return
    ranked = sorted(
        order_id(board, day_key, scope)
        for board, parts in by_part.items()
        for day_key, scope in parts
        if groups.kind_of(scope)
    )
    journals, bases = _journals_read(by_part, ranked)
    if half_folded := {b: j for b, j in journals.items() if j.get("folding")}:
        journals.update(_journals_fold(half_folded))  # finished before anything is added
        bases = _journals_read((), ranked)[1]  # as the fold left them
    for board, parts in _group_moves(journals, bases, by_part).items():
        by_part[board].update(parts)
    group_names_write(named)  # before any ranklist can hold them
    appended = {board: _journal_append(journals[board], parts) for board, parts in by_part.items()}
    _journals_swap(journals, appended)
    _placed_record(behind)
    if full := {board: j for board, j in appended.items() if j["n"] > JOURNAL_MAX}:
        _journals_fold(full)


def _batch_moves(
    wanted: set[tuple[str, int]],
) -> tuple[dict[str, list[tuple[dict, dict]]], dict[str, dict[tuple[str, str], list]], set[str]]:
    """What a batch moves, from the entries of these (board slug, programmer id), one read a
    board: ({board: [(entry, what the orders will hold for it)]} of those whose orders are
    behind, {board: {(day, scope): moves}}, the groups some of them join)."""
    by_board: dict[str, list[int]] = defaultdict(list)
    for board_slug, pid in wanted:
        by_board[board_slug].append(pid)
    oldest = history_from(_today())
    behind: dict[str, list[tuple[dict, dict]]] = {}
    by_part: dict[str, dict[tuple[str, str], list[sets.Move]]] = {}
    named: set[str] = set()
    for board_slug, pids in sorted(by_board.items()):
        for entry in entries(board_slug).find({"_id": {"$in": pids}}, _PLACEMENT):
            now_placed = placement(entry)
            if entry.get("placed") == now_placed:
                continue
            behind.setdefault(board_slug, []).append((entry, now_placed))
            parts = by_part.setdefault(board_slug, defaultdict(list))
            for place, move in _placement_moves(entry, oldest).items():
                parts[place].append(move)
            was_in = (entry.get("placed") or {}).get("groups", [])
            named.update(set(now_placed["groups"]) - set(was_in))
    return behind, by_part, named


def _placed_record(behind: dict[str, list[tuple[dict, dict]]]) -> None:
    """Record in each entry what the orders now hold for it (one bulk a board), unless a later
    applier already recorded a newer revision."""
    for board_slug, moved in behind.items():
        entries(board_slug).bulk_write(
            [
                UpdateOne(
                    {"_id": e["_id"], "placed.rev": {"$not": {"$gte": e.get("rev", 0)}}},
                    {"$set": {"placed": now_placed}},
                )
                for e, now_placed in moved
            ],
            ordered=False,
        )


def _manifests_move(folding: dict[str, tuple[int, list[sets.Move]]]) -> None:
    """Fold moves into many orders with a fixed number of commands: read the manifests, then
    the sets the moves touch (`$in` reads), write the changed sets (one bulk), then the
    manifests (one bulk). `folding`: {order: (the journal epoch, its moves)}; a manifest that
    holds that epoch already (a fold stopped midway wrote it) is left as it is. Only the lease
    holder writes; still, a set is written over only at the version read and a manifest is
    compare-and-swapped on its version, so an applier that outlived its lease can never
    overwrite a newer state (`OrdersConflict`)."""
    manifests = manifests_read(folding)
    by_order: dict[str, list[sets.Move]] = {}
    for order, (epoch, moves) in folding.items():
        if moves and manifests[order].folded < epoch:
            manifests[order].folded = epoch
            by_order[order] = moves
    if not by_order:
        return
    wanted = {
        _set_doc_id(order, set_id): (order, set_id)
        for order, moves in by_order.items()
        for set_id in sets.sets_to_read(manifests[order], moves)[0]
        if set_id not in manifests[order].inline
    }
    stored = _sets_read(wanted)
    set_writes, swaps, expected_matches = [], [], 0
    for order, moves in by_order.items():
        writes, swap = _order_move(order, manifests[order], stored[order], moves)
        set_writes += writes
        expected_matches += sum(isinstance(w, ReplaceOne) for w in writes)
        swaps.append(swap)
    if set_writes:
        try:
            result = order_sets().bulk_write(set_writes, ordered=False)
        except BulkWriteError as error:
            raise OrdersConflict("a set was written since it was read") from error
        if result.matched_count + result.upserted_count < expected_matches:
            raise OrdersConflict("a set changed since it was read")
    _manifests_swap(swaps)


def _sets_read(wanted: dict[str, tuple[str, int]]) -> dict[str, dict[int, tuple[int, bytes]]]:
    """{order: {set id: (version, records blob)}} of the sets `wanted` ({set document id: (order,
    set id)}), in `$in` reads; a set listed but not stored reads as (None, b"")."""
    stored: dict[str, dict[int, tuple[int, bytes]]] = defaultdict(dict)
    for doc in _by_ids(order_sets(), wanted):
        order, set_id = wanted[doc["_id"]]
        stored[order][set_id] = (doc["v"], bytes(doc["r"]))
    for order, set_id in wanted.values():
        stored[order].setdefault(set_id, (None, b""))
    return stored


def _order_move(
    order: str, manifest: sets.Manifest, stored: dict[int, tuple[int, bytes]], moves: list
) -> tuple[list, tuple[str, int, dict]]:
    """The set writes and the manifest swap that apply `moves` to one order."""
    missing = {s for s, (version, _blob) in stored.items() if version is None}
    mine = {**manifest.inline, **{s: vb for s, vb in stored.items() if s not in missing}}
    sets.manifest_repair(manifest, mine)
    expected, was_inline = manifest.version, set(manifest.inline)
    writes: list = [DeleteOne({"_id": _set_doc_id(order, s)}) for s in manifest.trash]
    loaded = {s: blob for s, (_v, blob) in mine.items()} | dict.fromkeys(missing, b"")
    _read, fold = sets.sets_to_read(manifest, moves)  # (again: a repair may have changed it)
    rewrite = sets.moves_apply(manifest, loaded, moves, fold & set(loaded))
    manifest.version += 1
    manifest.inline = _inlined(manifest, rewrite)
    for set_id, (version, blob) in rewrite.written.items():
        if set_id in manifest.inline:
            continue
        document = {"v": version, "r": Binary(blob)}
        doc_id = _set_doc_id(order, set_id)
        if set_id in rewrite.created or set_id in was_inline:
            writes.append(ReplaceOne({"_id": doc_id}, document, upsert=True))
        else:  # over the version read only (a set listed but lost is written again)
            writes.append(ReplaceOne({"_id": doc_id, "v": version - 1}, document, upsert=True))
    # Sets no longer listed, or now kept inside the manifest, are deleted by the next writer.
    manifest.trash = [s for s in rewrite.dropped if s not in was_inline] + [
        s for s in manifest.inline if s not in was_inline and s not in rewrite.created
    ]
    return writes, (order, expected, manifest_document(manifest))


def _inlined(manifest: sets.Manifest, rewrite: sets.Rewrite) -> dict[int, tuple[int, bytes]]:
    """The set kept inside the manifest: the only one of an order of at most INLINE_MAX."""
    if len(manifest) != 1 or manifest.length(0) > INLINE_MAX:
        return {}
    only = manifest.set_id(0)
    found = rewrite.written.get(only) or manifest.inline.get(only)
    return {only: found} if found else {}


def _manifests_swap(swaps: list[tuple[str, int, dict]]) -> None:
    """Compare-and-swap manifests (and journals) on their version: one that somebody else changed
    first (only an applier that outlived its lease can) keeps the newer writer's state, and the
    moves stay pending (`OrdersConflict`)."""
    operations = [
        InsertOne({"_id": order, **document})
        if expected == 0
        else ReplaceOne({"_id": order, "v": expected}, document)
        for order, expected, document in swaps
    ]
    try:
        result = orders().bulk_write(operations, ordered=False)
    except BulkWriteError as error:
        raise OrdersConflict("a manifest was created meanwhile") from error
    if result.matched_count + result.inserted_count < len(operations):
        raise OrdersConflict("a manifest changed since it was read")


def orders_write(built: dict[str, tuple[sets.Manifest, sets.Rewrite]]) -> None:
    """Store orders built in bulk (rebuilds), replacing whatever was there."""
    set_writes, manifest_writes = [], []
    for order, (manifest, rewrite) in built.items():
        manifest.inline = _inlined(manifest, rewrite)
        set_writes += [
            InsertOne({"_id": _set_doc_id(order, s), "v": v, "r": Binary(blob)})
            for s, (v, blob) in rewrite.written.items()
            if s not in manifest.inline
        ]
        manifest_writes.append(InsertOne({"_id": order, **manifest_document(manifest)}))
    for start in range(0, len(set_writes), 100):  # sets of up to 80 KB: 8 MB a command
        order_sets().bulk_write(set_writes[start : start + 100], ordered=False)
    for start in range(0, len(manifest_writes), 1_000):
        orders().bulk_write(manifest_writes[start : start + 1_000], ordered=False)


def orders_prune(board_slug: str, today: int) -> int:
    """Delete the orders of the board's days older than the history kept, with their sets: no
    page shows them and no move touches them again (`_records_placed`), so without this every
    day would leave its orders behind for good. One range on `_id` per collection: epoch days
    have five digits from 1997 to 2243, so day names sort like the days. Background work (beat).
    Returns how many days' manifests went."""
    old_days = {"$gte": f"{board_slug}|0", "$lt": f"{board_slug}|{history_from(today)}"}
    removed = orders().delete_many({"_id": old_days}).deleted_count
    order_sets().delete_many({"_id": old_days})
    return removed


def orders_forget(board_slug: str) -> None:
    """Drop every order of a board (before a rebuild writes them anew): rebuild-time, it scans."""
    prefix = {"$regex": f"^{board_slug}\\|"}
    orders().delete_many({"_id": prefix})
    order_sets().delete_many({"_id": prefix})

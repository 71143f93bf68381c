"""The engine on MongoDB: entries, the order of every board day, and how a solve moves them.

This is the only module that names an entry field path or a board collection.

**Entries** (``entries.<board>``), one document per (board, programmer)::

    {_id: <programmer id>, handle, groups: ["country:BD", "org:..."],
     days: {"<epoch day>": count}, last: {"<epoch day>": latest solve time that day},
     sums: {"<day>": score}, keys: {"<day>": sort key},
     applied: [ids of the latest solves counted],
     placed: {keys, handle, groups}}      # what the orders hold for this programmer

A solve runs one aggregation-pipeline update on the entry (`solve_pipeline`) that adds the day's
count and recomputes the forward-dated sums and sort keys of every day the solve touches (see
`maths`), trimming days that can no longer change anything. The update is idempotent by the
solve's id (``applied``): a retry after a fault counts nothing twice. Real MongoDB can serve "the
board of day D" from the wildcard indexes on ``sums.$**`` and ``keys.$**`` (the seed's design).

**Orders** (``orders`` and ``order_sets``): the listing order of each (board, day, group), as
sorted entry sets with a manifest (see `sets`); the manifest's score counts are the day's
histogram. Reading a page, a rank or a neighbourhood is a manifest read plus at most one read of
sets by `_id`, at any size. Orders are kept forward-dated like the sums, so a new day needs no
cron, no rebuild and no scan: its order was written by the solves that made it.

Why `_id` reads: the embedded server (SecantusDB 0.7, the default and the test server) never uses
a wildcard index (``keys.$**`` is kept as a plain index on the literal path, so every
``keys.<day>`` query scans the collection), does not push a limit into an index scan (a range
with sort and limit decodes every document of the range first), and its ``findAndModify`` on an
existing document scans the whole collection. `_id` point reads and writes, ``$in`` on `_id`,
and binary values stay fast on it at any size, and on every other MongoDB-compatible engine.

**How a solve moves the orders.** The entry changes first (atomically, once); orders follow.
Each entry records in ``placed`` what the orders hold for it. Before counting, a solve lists its
programmer as pending in the board's ``appliers`` document; whoever holds that document's lease
reads the pending entries, records in ``placing`` where it is moving each programmer, moves them
from ``placed`` to their current keys in every order they are in, then updates ``placed``. One
applier per board means the orders never see two writers, and solves that arrive together are
applied in one batch. Moves are idempotent (a record is removed if present, inserted if absent;
manifests are recomputed from the sets), so a crash anywhere leaves the programmer pending and
the next solve on that board, a retry, or the repair task finishes the job, taking out whatever
the stopped batch may have placed: nothing is lost and nothing moves twice.
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
from pymongo import ASCENDING, DeleteOne, IndexModel, InsertOne, ReplaceOne, UpdateOne
from pymongo.collection import Collection
from pymongo.errors import BulkWriteError

from .. import mongo
from . import maths, sets

APPLIED_KEPT = 64  # solve ids an entry remembers: far more than can be in flight at once
APPLY_LEASE = dt.timedelta(seconds=30)  # longer than any batch takes; frees a crashed applier
# How long a solve waits for another request to apply it: longer than the lease, so a solve
# outlives an applier that died holding it (its server was killed under it) and applies the
# batch itself. Its answer then means that it is listed, with no repair task needed.
APPLY_WAIT_SECONDS = 40.0
APPLY_POLL_MAX_SECONDS = 0.05  # the longest pause between two looks at the lease while waiting
READ_RETRIES = 3
INLINE_MAX = 128  # an order this small keeps its one set inside its manifest: one write moves it
T = TypeVar("T")


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


def _trimmed(document: str, oldest: int) -> dict:
    """The sub-document without the day keys older than `oldest`."""
    return {
        "$arrayToObject": {
            "$filter": {
                "input": {"$objectToArray": {"$ifNull": [f"${document}", {}]}},
                "cond": {"$gte": [{"$toInt": "$$this.k"}, oldest]},
            }
        }
    }


def _key_expression(score: dict, reached: dict) -> dict:
    """`maths.sort_key` as an aggregation expression."""
    seconds = {
        "$toLong": {"$floor": {"$divide": [{"$subtract": [reached, maths.KEY_EPOCH]}, 1000]}}
    }
    return {
        "$add": [
            {"$multiply": [{"$min": [score, maths.MAX_SCORE]}, 2**maths.TIME_BITS]},
            {"$subtract": [2**maths.TIME_BITS - 1, seconds]},
        ]
    }


def _window(start: int, end: int, value: str) -> dict:
    """The values (`n` counts or `t` times) of the days from `start` to `end` in `_w`."""
    days = {
        "$filter": {
            "input": "$_w",
            "cond": {"$and": [{"$gte": ["$$this.d", start]}, {"$lte": ["$$this.d", end]}]},
        }
    }
    return {"$map": {"input": days, "in": f"$$this.{value}"}}


def _merged(document: str, changes: dict) -> dict:
    return {"$mergeObjects": [{"$ifNull": [f"${document}", {}]}, changes]}


def _all_time_stages(event: SolveEvent) -> list[dict]:
    key = maths.ALL_TIME_KEY
    total = {"$add": [{"$ifNull": [_field(key, "sums"), 0]}, event.value]}
    latest = {"$max": [{"$ifNull": [_field(key, "last"), event.at]}, event.at]}
    return [
        {"$set": {"sums": {key: total}, "last": {key: latest}}},
        {"$set": {"keys": {key: _key_expression(_field(key, "sums"), _field(key, "last"))}}},
    ]


def _rolling_stages(window: maths.Window, event: SolveEvent, today: int) -> list[dict]:
    day = str(event.day)
    days = window.affected_days(event.day)
    count = {"$add": [{"$ifNull": [_field(day, "days"), 0]}, event.value]}
    latest = {"$max": [{"$ifNull": [_field(day, "last"), event.at]}, event.at]}
    each_day = {
        "$map": {
            "input": {"$objectToArray": "$days"},
            "in": {
                "d": {"$toInt": "$$this.k"},
                "n": "$$this.v",
                "t": {"$getField": {"field": "$$this.k", "input": "$last"}},
            },
        }
    }
    sums = {str(d): {"$sum": _window(window.start(d), d, "n")} for d in days}
    keys = {
        str(d): _key_expression(
            {"$sum": _window(window.start(d), d, "n")}, {"$max": _window(window.start(d), d, "t")}
        )
        for d in days
    }
    return [
        {"$set": {"days": _merged("days", {day: count}), "last": _merged("last", {day: latest})}},
        {
            "$set": {
                "days": _trimmed("days", counts_from(window, today)),
                "last": _trimmed("last", counts_from(window, today)),
                "sums": _trimmed("sums", history_from(today)),
                "keys": _trimmed("keys", history_from(today)),
            }
        },
        {"$set": {"_w": each_day}},
        {"$set": {"sums": _merged("sums", sums), "keys": _merged("keys", keys)}},
        {"$unset": "_w"},
    ]


def solve_pipeline(window: maths.Window, event: SolveEvent, today: int) -> list[dict]:
    """The one atomic update that counts `event` on a board with this window, once: an entry
    that already lists the solve's id is left exactly as it is."""
    counting = (
        _all_time_stages(event) if window.is_all_time else _rolling_stages(window, event, today)
    )
    seen = {"$in": [event.solve_id, {"$ifNull": ["$applied", []]}]}
    # Each stage keeps every field as it was when the solve was seen before.
    guarded = []
    for stage in counting:
        if "$set" in stage:
            guarded.append(
                {
                    "$set": {
                        name: {"$cond": ["$_seen", f"${name}", value]}
                        for name, value in stage["$set"].items()
                    }
                }
            )
        else:
            guarded.append(stage)
    applied = {
        "$slice": [
            {"$concatArrays": [{"$ifNull": ["$applied", []]}, [event.solve_id]]},
            -APPLIED_KEPT,
        ]
    }
    identity = {"handle": event.handle, "groups": list(event.groups)}
    return [
        {"$set": {"_seen": seen}},
        *guarded,
        {"$set": {**identity, "applied": {"$cond": ["$_seen", "$applied", applied]}}},
        {"$unset": "_seen"},
    ]


# --- entries ----------------------------------------------------------------------------------


def entry_count_solve(board_slug: str, window: maths.Window, event: SolveEvent, today: int) -> None:
    """Count a solve in the programmer's entry, once whatever the retries. The programmer is
    listed as pending first, so a crash right after the count still leaves the orders to follow."""
    pending_add(board_slug, [event.programmer_id])
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


def entry_replace(board_slug: str, programmer_id: int, document: dict | None) -> None:
    """Set a programmer's entry to one computed from their solves (None: off the board), keeping
    what the orders hold, then bring the orders along (only this programmer moves)."""
    pending_add(board_slug, [programmer_id])
    fields = document or {"handle": "", "groups": [], "sums": {}, "keys": {}}
    fields = {name: value for name, value in fields.items() if name != "_id"}
    unset = {name: "" for name in ("days", "last") if name not in fields}
    update = {"$set": fields, **({"$unset": unset} if unset else {})}
    entries(board_slug).update_one({"_id": programmer_id}, update, upsert=True)
    orders_catch_up(board_slug, [programmer_id])


# --- manifests and sets --------------------------------------------------------------------------


def order_id(board_slug: str, day_key: str, scope: str = "") -> str:
    """The `_id` of a board day's manifest; `scope` is a group (``country:BD``) or everybody."""
    return f"{board_slug}|{day_key}|{scope}"


def _set_doc_id(order: str, set_id: int) -> str:
    return f"{order}|{set_id}"


def _manifest_decode(document: dict | None) -> sets.Manifest:
    """A manifest from its stored form: per set, id, version, length, last member's sort bytes
    and its score counts, packed in one binary value."""
    if document is None:
        return sets.Manifest()
    raw, infos, i = bytes(document["sets"]), [], 0
    while i < len(raw):
        set_id = int.from_bytes(raw[i : i + 8], "big")
        version = int.from_bytes(raw[i + 8 : i + 12], "big")
        length = int.from_bytes(raw[i + 12 : i + 16], "big")
        last = raw[i + 16 : i + 16 + sets.SORT_BYTES]
        i += 16 + sets.SORT_BYTES
        count = int.from_bytes(raw[i : i + 2], "big")
        scores = {
            int.from_bytes(raw[j : j + 4], "big"): int.from_bytes(raw[j + 4 : j + 8], "big")
            for j in range(i + 2, i + 2 + 8 * count, 8)
        }
        i += 2 + 8 * count
        infos.append(sets.SetInfo(set_id, version, length, last, scores))
    manifest = sets.Manifest(infos, document["v"])
    if document.get("inline") is not None and infos:
        manifest.inline = {infos[0].set_id: (infos[0].version, bytes(document["inline"]))}
    return manifest


def _manifest_encode(manifest: sets.Manifest) -> Binary:
    parts = []
    for info in manifest.sets:
        parts.append(
            info.set_id.to_bytes(8, "big")
            + info.version.to_bytes(4, "big")
            + info.length.to_bytes(4, "big")
            + info.last
            + len(info.scores).to_bytes(2, "big")
            + b"".join(s.to_bytes(4, "big") + n.to_bytes(4, "big") for s, n in info.scores.items())
        )
    return Binary(b"".join(parts))


def manifest_document(manifest: sets.Manifest) -> dict:
    """A manifest as stored, with the records of a small order's one set inside it."""
    inline = next(iter(manifest.inline.values()), None)
    return {
        "v": manifest.version,
        "sets": _manifest_encode(manifest),
        "inline": Binary(inline[1]) if inline else None,
    }


def manifests_read(order_ids: Iterable[str]) -> dict[str, sets.Manifest]:
    wanted = list(order_ids)
    found = {doc["_id"]: doc for doc in orders().find({"_id": {"$in": wanted}})}
    return {order: _manifest_decode(found.get(order)) for order in wanted}


def _manifest_read(order: str) -> sets.Manifest:
    return _manifest_decode(orders().find_one({"_id": order}))


def histogram_read(board_slug: str, day_key: str, scope: str = "") -> dict[int, int]:
    """{score: number of programmers} of one board day: one `_id` read."""
    return _manifest_read(order_id(board_slug, day_key, scope)).histogram


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
    """The records of the listed sets, in order. A set newer than the manifest means a writer is
    between writing it and the manifest: read again, or on the last try take the sets as they
    are and recompute the manifest's entries from them."""
    chosen = sorted(set(indexes))
    external = [
        manifest.sets[i].set_id for i in chosen if manifest.sets[i].set_id not in manifest.inline
    ]
    stored = {**manifest.inline, **_sets_fetch(order, external)}
    if any(
        stored.get(manifest.sets[i].set_id, (None,))[0] != manifest.sets[i].version for i in chosen
    ):
        if not last_try:
            raise _Behind
        sets.manifest_repair(manifest, stored)
    records: list[bytes] = []
    for i in chosen:
        records += sets.records_of(stored.get(manifest.sets[i].set_id, (0, b""))[1])
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
    order = order_id(board_slug, day_key, scope)

    def read(last_try: bool) -> tuple[dict[int, int], list[sets.Member]]:
        manifest = _manifest_read(order)
        first = manifest.set_at(offset)
        if first is None or limit <= 0:
            return manifest.histogram, []
        index, inside = first
        wanted, covered = [index], manifest.sets[index].length - inside
        while covered < limit and wanted[-1] + 1 < len(manifest.sets):
            wanted.append(wanted[-1] + 1)
            covered += manifest.sets[wanted[-1]].length
        records = _records(order, manifest, wanted, last_try)
        members = [sets.Member.from_record(r) for r in records[inside : inside + limit]]
        return manifest.histogram, members

    return _reading(read)


def member_position(board_slug: str, day_key: str, scope: str, member: sets.Member) -> int | None:
    """A member's 0-based place in the listing order of a board day (None: not listed): the
    manifest, bisected with their sort bytes, then one set."""
    order = order_id(board_slug, day_key, scope)
    record = member.record()

    def read(last_try: bool) -> int | None:
        manifest = _manifest_read(order)
        index = manifest.set_for(record[: sets.SORT_BYTES])
        if index < 0:
            return None
        records = _records(order, manifest, [index], last_try)
        position = bisect.bisect_left(records, record)
        if position >= len(records) or records[position] != record:
            return None
        return manifest.offset_of_set(index) + position

    return _reading(read)


def members_in_order(board_slug: str, day_key: str, scope: str = "") -> Iterator[sets.Member]:
    """Every member of a board day in listing order, a few sets at a time (background work such
    as rank-history snapshots: its cost grows with the board, so never on a request)."""
    order = order_id(board_slug, day_key, scope)
    manifest = _manifest_read(order)
    for start in range(0, len(manifest.sets), 16):
        chosen = range(start, min(start + 16, len(manifest.sets)))
        for record in _records(order, manifest, chosen, last_try=True):
            yield sets.Member.from_record(record)


# --- moving the orders -------------------------------------------------------------------------


def pending_add(board_slug: str, programmer_ids: list[int]) -> None:
    appliers().update_one(
        {"_id": board_slug}, {"$addToSet": {"pending": {"$each": programmer_ids}}}, upsert=True
    )


def pending_clear(board_slug: str) -> None:
    appliers().update_one({"_id": board_slug}, {"$set": {"pending": []}}, upsert=True)


def _lease_take(board_slug: str, token: str) -> list[int] | None:
    """Take the board's lease if it is free (or expired): its pending programmers, else None."""
    now = timezone.now()
    taken = appliers().update_one(
        {"_id": board_slug, "until": {"$not": {"$gt": now}}},
        {"$set": {"until": now + APPLY_LEASE, "token": token}},
    )
    if taken.modified_count != 1:
        return None
    return _pending(board_slug)


def _lease_release(board_slug: str, token: str, done: list[int]) -> None:
    appliers().update_one(
        {"_id": board_slug, "token": token},
        {"$pullAll": {"pending": done}, "$set": {"until": None}},
    )


def _pending(board_slug: str) -> list[int]:
    document = appliers().find_one({"_id": board_slug}, {"pending": 1}) or {}
    return list(document.get("pending", []))


def orders_catch_up(board_slug: str, programmer_ids: Iterable[int] = ()) -> None:
    """Bring the board's orders up to date with its entries, at least for `programmer_ids`
    (all pending ones when empty). Takes the board's lease and applies everything pending in one
    batch; while somebody else holds it, waits for them to apply these programmers.

    Done means the orders hold each programmer's entry as it is now (`_unplaced`), not merely
    that they left the pending list: an applier may have read an entry just before this
    request's count changed it, then taken the programmer off the list as applied. Such a
    programmer goes back on the list, and the next batch moves them again."""
    mine = set(programmer_ids)
    token = secrets.token_hex(8)
    deadline = time.monotonic() + APPLY_WAIT_SECONDS
    pause = 0.003
    while True:
        pending = _lease_take(board_slug, token)
        if pending is not None:
            try:
                if pending:
                    _orders_apply(board_slug, pending)
            except BaseException:
                # Nothing is taken off the pending list: the next batch applies it all again.
                mongo.cleanup(lambda: _lease_release(board_slug, token, []))
                raise
            _lease_release(board_slug, token, pending)
            if mine.issubset(pending):
                return  # their entries were read after this request changed them
        if not mine.intersection(_pending(board_slug)):
            unplaced = _unplaced(board_slug, mine)
            if not unplaced:
                return  # another request applied them
            pending_add(board_slug, sorted(unplaced))  # it read them before this request's change
        if time.monotonic() > deadline:
            return  # still pending: the next solve on this board or the repair task applies it
        time.sleep(pause)
        pause = min(pause * 2, APPLY_POLL_MAX_SECONDS)  # a long wait must not load the server


def _unplaced(board_slug: str, programmer_ids: set[int]) -> set[int]:
    """Those of these programmers whose entry the orders do not hold as it is (one `$in`)."""
    if not programmer_ids:
        return set()
    fields = {"keys": 1, "handle": 1, "groups": 1, "placed": 1, "placing": 1}
    found = entries(board_slug).find({"_id": {"$in": list(programmer_ids)}}, fields)
    return {
        entry["_id"]
        for entry in found
        if entry.get("placed") != placement(entry) or entry.get("placing")
    }


def _placement_moves(entry: dict, oldest_day: int) -> dict[tuple[str, str], list[sets.Move]]:
    """{(day, scope): moves} taking a programmer from what the orders hold (`placed`, and what a
    batch that stopped midway was `placing`) to their current keys, handle and groups."""
    empty = {"keys": {}, "handle": "", "groups": []}
    placed, placing = entry.get("placed") or empty, entry.get("placing", [])
    pid = entry["_id"]
    new_scopes = {"", *entry.get("groups", [])}
    keys = entry.get("keys", {})

    def record(held: dict, day_key: str, scope: str) -> bytes | None:
        key = held["keys"].get(day_key, 0)
        if key > 0 and scope in {"", *held["groups"]}:
            return sets.Member(key, held["handle"], pid).record()
        return None

    moves: dict[tuple[str, str], list[sets.Move]] = defaultdict(list)
    for day_key in set(keys).union(*(held["keys"] for held in [placed, *placing])):
        if day_key != maths.ALL_TIME_KEY and int(day_key) < oldest_day:
            continue  # nobody reads a board older than the history kept
        new_key = keys.get(day_key, 0)
        for scope in new_scopes.union(*({"", *held["groups"]} for held in [placed, *placing])):
            old = record(placed, day_key, scope)
            new = None
            if new_key > 0 and scope in new_scopes:
                new = sets.Member(new_key, entry["handle"], pid).record()
            stale = {record(held, day_key, scope) for held in placing} - {None, old, new}
            moves[(day_key, scope)] += [sets.Move(r, None) for r in sorted(stale)]
            if old != new:
                moves[(day_key, scope)].append(sets.Move(old, new))
    return {where: day_moves for where, day_moves in moves.items() if day_moves}


def _orders_apply(board_slug: str, programmer_ids: list[int]) -> None:
    """Move these programmers in every order they are in, then record what the orders hold.

    What a move places is recorded first (`placing`): a batch that stops midway may have written
    some orders and not others, and the next batch must take out whatever it left, even after the
    programmer's keys have changed again."""
    found = list(entries(board_slug).find({"_id": {"$in": programmer_ids}}))
    oldest = history_from(_today())
    by_order: dict[str, list[sets.Move]] = defaultdict(list)
    moving = []
    for entry in found:
        moves = _placement_moves(entry, oldest)
        for (day_key, scope), day_moves in moves.items():
            by_order[order_id(board_slug, day_key, scope)] += day_moves
        if moves:
            moving.append(
                UpdateOne({"_id": entry["_id"]}, {"$push": {"placing": placement(entry)}})
            )
    if moving:
        entries(board_slug).bulk_write(moving, ordered=False)
    _manifests_move(by_order)
    placed = [
        UpdateOne(
            {"_id": entry["_id"]},
            {"$set": {"placed": placement(entry)}, "$unset": {"placing": ""}},
        )
        for entry in found
    ]
    if placed:
        entries(board_slug).bulk_write(placed, ordered=False)


def _manifests_move(by_order: dict[str, list[sets.Move]]) -> None:
    """Apply moves to many orders with a fixed number of commands: read the manifests, then the
    sets the moves touch (two `$in` reads), write the changed sets (one bulk), then the manifests
    (one bulk). Only the lease holder writes, so sets are written in place; a manifest is still
    compare-and-swapped on its version, so a stale lease holder can never overwrite a newer one."""
    if not by_order:
        return
    manifests = manifests_read(by_order)
    wanted = [
        _set_doc_id(order, set_id)
        for order, moves in by_order.items()
        for set_id in sets.sets_touched(manifests[order], moves)
        if set_id not in manifests[order].inline
    ]
    found = order_sets().find({"_id": {"$in": wanted}}) if wanted else []
    stored = {doc["_id"]: (doc["v"], bytes(doc["r"])) for doc in found}
    set_writes, swaps = [], []
    for order, moves in by_order.items():
        manifest = manifests[order]
        mine = dict(manifest.inline)
        mine.update(
            (info.set_id, stored[_set_doc_id(order, info.set_id)])
            for info in manifest.sets
            if _set_doc_id(order, info.set_id) in stored
        )
        sets.manifest_repair(manifest, mine)
        expected, was_inline = manifest.version, set(manifest.inline)
        rewrite = sets.moves_apply(manifest, {s: blob for s, (_v, blob) in mine.items()}, moves)
        manifest.version += 1
        manifest.inline = _inlined(manifest, rewrite)
        for set_id in manifest.inline:
            rewrite.written.pop(set_id, None)
            if set_id not in was_inline:
                rewrite.dropped.append(set_id)  # it was stored on its own until now
        rewrite.dropped = [s for s in rewrite.dropped if s not in was_inline]
        for set_id, (version, blob) in rewrite.written.items():
            set_writes.append(
                ReplaceOne(
                    {"_id": _set_doc_id(order, set_id)},
                    {"v": version, "r": Binary(blob)},
                    upsert=True,
                )
            )
        set_writes += [DeleteOne({"_id": _set_doc_id(order, s)}) for s in rewrite.dropped]
        swaps.append((order, expected, manifest_document(manifest)))
    if set_writes:
        order_sets().bulk_write(set_writes, ordered=False)
    _manifests_swap(swaps)


def _inlined(manifest: sets.Manifest, rewrite: sets.Rewrite) -> dict[int, tuple[int, bytes]]:
    """The set kept inside the manifest: the only one of an order of at most INLINE_MAX."""
    if len(manifest.sets) != 1 or manifest.sets[0].length > INLINE_MAX:
        return {}
    only = manifest.sets[0].set_id
    found = rewrite.written.get(only) or manifest.inline.get(only)
    return {only: found} if found else {}


def _manifests_swap(swaps: list[tuple[str, int, dict]]) -> None:
    """Compare-and-swap manifests on their version; a manifest that somebody else changed first
    (only a lease holder that outlived its lease can) keeps the newer writer's state."""
    operations = [
        InsertOne({"_id": order, **document})
        if expected == 0
        else ReplaceOne({"_id": order, "v": expected}, document)
        for order, expected, document in swaps
    ]
    try:
        orders().bulk_write(operations, ordered=False)
    except BulkWriteError:
        pass  # a manifest created meanwhile: the newer writer's state stands, and is repaired
        # from the sets by the next writer (`sets.manifest_repair`)


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


def orders_forget(board_slug: str) -> None:
    """Drop every order of a board (before a rebuild writes them anew): rebuild-time, it scans."""
    prefix = {"$regex": f"^{board_slug}\\|"}
    orders().delete_many({"_id": prefix})
    order_sets().delete_many({"_id": prefix})


def placement(entry: dict) -> dict:
    """What the orders hold for an entry once it is placed: its keys, handle and groups."""
    return {
        "keys": entry.get("keys", {}),
        "handle": entry.get("handle", ""),
        "groups": entry.get("groups", []),
    }

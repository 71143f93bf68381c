"""The entries: one document per (board, programmer), and how a solve counts in it.

This is the only module that names an entry field path or a board's entries collection: the
others ask it through its functions (what an entry's placement is, which moves take a programmer
from what the orders hold to their entry, which entries the orders are behind).

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
by the solve's id (``applied``): a retry after a fault counts nothing twice. The seed's query,
"the board of day D" sorted by ``keys.D`` (`entries_by_key`), is served by the wildcard index on
``keys.$**`` on real MongoDB; requests read the orders instead, and `verify` checks the orders
against that query.

Each entry records in ``placed`` what the orders hold for it and at which ``rev`` of the entry
(see `applier`, which moves the orders from ``placed`` to the entry's current keys).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone
from pymongo import ASCENDING, DESCENDING, IndexModel, UpdateOne
from pymongo.collection import Collection

from .. import mongo
from . import maths, moving, sets

APPLIED_KEPT = 64  # solve ids an entry remembers: far more than can be in flight at once
# An entry last trimmed this few days ago drops its old days by name (`_trimmed_today`): enough
# for a programmer who solves every few days; each name costs a little on every solve, as the
# embedded server checks the whole pipeline whichever branch runs.
TRIM_BY_NAME = 3


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


def current_day() -> int:
    """Today's epoch day in the leaderboard's time zone."""
    return maths.epoch_day(timezone.now(), settings.LEADERBOARD_TIME_ZONE)


# --- the collection and its indexes -----------------------------------------------------------


def entries(board_slug: str) -> Collection:
    # Board slugs are validated SlugFields, so they are safe in a collection name.
    return mongo.get_db()[f"entries.{board_slug}"]


def board_indexes(board_slugs: Iterable[str] | None = None) -> dict[str, list[IndexModel]]:
    """The indexes of the boards' entries collections (every board when `board_slugs` is None):
    `keys.$**` serves the seed's per-day query (`entries_by_key`) on real MongoDB. Nothing on a
    request path needs it (orders are read by `_id`), so it is built by the command, not at a
    process's first use.

    There is no `sums.$**`: no query filters or sorts on a day's sums (a day's key orders its
    members by score first, and is above zero exactly when they are on the board), and every
    solve rewrites the sums of each day it touches, so on real MongoDB a second wildcard index
    would double the index keys each solve deletes and inserts, for no reader."""
    if board_slugs is None:
        from ..models import Board  # the registry calls this once the apps are ready

        board_slugs = Board.objects.values_list("slug", flat=True)
    wildcard = [IndexModel([("keys.$**", ASCENDING)], name="keys_wildcard")]
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
    follow (`applier.orders_catch_up`), the solve stays unapplied in the log, for a retry or the
    repair task to finish."""
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


def entries_members(
    board_slug: str, programmer_ids: Iterable[int], day_key: str, scope: str = ""
) -> dict[int, sets.Member]:
    """{programmer id: their member of the order} of a board day for those on it, in the group
    (one `$in` read)."""
    found = entries(board_slug).find(
        {"_id": {"$in": list(programmer_ids)}}, {"handle": 1, f"keys.{day_key}": 1, "groups": 1}
    )
    return {
        doc["_id"]: sets.Member(doc["keys"][day_key], doc["handle"], doc["_id"])
        for doc in found
        if entry_key(doc, day_key) > 0 and (not scope or scope in doc.get("groups", []))
    }


def entries_set(programmer_id: int, documents: dict[str, dict | None]) -> None:
    """Set a programmer's entries ({board slug: entry computed from their solves, None: off the
    board}), keeping what the orders hold: each entry's revision goes up, so the orders are
    behind it until an applier moves them (`applier.entries_replace` lists the programmer as
    pending first)."""
    for board_slug, document in documents.items():
        fields = document or {"handle": "", "groups": [], "sums": {}, "keys": {}}
        fields = {name: value for name, value in fields.items() if name not in ("_id", "rev")}
        unset = {name: "" for name in ("days", "last") if name not in fields}
        update = {"$set": fields, "$inc": {"rev": 1}, **({"$unset": unset} if unset else {})}
        entries(board_slug).update_one({"_id": programmer_id}, update, upsert=True)


# --- what the orders hold for an entry ---------------------------------------------------------


def placement(entry: dict) -> dict:
    """What the orders hold for an entry once it is placed: its keys, handle and groups, and
    the entry's revision they reflect."""
    return {
        "keys": entry.get("keys", {}),
        "handle": entry.get("handle", ""),
        "groups": entry.get("groups", []),
        "rev": entry.get("rev", 0),
    }


_PLACEMENT = {"handle": 1, "groups": 1, "keys": 1, "rev": 1, "placed": 1}


def entries_behind(board_slug: str, programmer_ids: list[int]) -> Iterator[tuple[dict, dict]]:
    """(entry, what the orders will hold for it) of those of these programmers whose orders are
    behind their entry on a board (one read)."""
    for entry in entries(board_slug).find({"_id": {"$in": programmer_ids}}, _PLACEMENT):
        now_placed = placement(entry)
        if entry.get("placed") != now_placed:
            yield entry, now_placed


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


def placement_moves(entry: dict, oldest_day: int) -> dict[tuple[str, str], moving.Move]:
    """{(day, scope): move} taking a programmer from what the orders hold (`placed`) to their
    current keys, handle and groups."""
    pid = entry["_id"]
    old = _records_placed(entry.get("placed"), pid, oldest_day)
    new = _records_placed(placement(entry), pid, oldest_day)
    return {
        place: moving.Move(old.get(place), new.get(place))
        for place in set(old) | set(new)
        if old.get(place) != new.get(place)
    }


def groups_joined(entry: dict, now_placed: dict) -> set[str]:
    """The groups an entry is in that the orders do not hold it in yet."""
    was_in = (entry.get("placed") or {}).get("groups", [])
    return set(now_placed["groups"]) - set(was_in)


def placed_record(behind: dict[str, list[tuple[dict, dict]]]) -> None:
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


# --- the seed's query: a board day straight from the entries -------------------------------------


def entries_by_key(board_slug: str, day_key: str, scope: str = "") -> Iterator[sets.Member]:
    """The members of a board day in listing order by the seed's query over the entries,
    ``find({"keys.D": {"$gt": 0}}).sort({"keys.D": -1})``: what its order must hold (`verify`).
    Real MongoDB serves it from the wildcard index ``keys.$**``; the embedded server (SecantusDB
    0.7) never uses a wildcard index and scans the collection. Rebuild-time, never on a request.

    A group's scope (one of ``groups``) is filtered here, not in the query: real MongoDB serves
    a sort from a wildcard index only when the predicate and the sort are on that one field, so
    the query stays exactly that; a group's day reads the whole day through the index.
    Ties: the query leaves equal keys in any order; an order lists them by their records' bytes
    (`sets.Member.record`: lower-case handle, then id), so each run of them is sorted so here."""
    path = f"keys.{day_key}"
    found = entries(board_slug).find(
        {path: {"$gt": 0}}, {"handle": 1, "groups": 1, path: 1}, sort=[(path, DESCENDING)]
    )
    tie: list[sets.Member] = []
    for entry in found:
        if scope and scope not in entry.get("groups", []):
            continue
        member = sets.Member(entry["keys"][day_key], entry["handle"], entry["_id"])
        if tie and tie[0].key != member.key:
            yield from sorted(tie, key=sets.Member.record)
            tie = []
        tie.append(member)
    yield from sorted(tie, key=sets.Member.record)


def entries_places(board_slug: str, oldest_day: int) -> set[tuple[str, str]]:
    """{(day, scope)} of every order the entries put somebody in from `oldest_day` on, as the
    orders hold them (a scan: rebuild-time)."""
    places: set[tuple[str, str]] = set()
    for entry in entries(board_slug).find({}, {"keys": 1, "handle": 1, "groups": 1}):
        places.update(_records_placed(placement(entry), entry["_id"], oldest_day))
    return places

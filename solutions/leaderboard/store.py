"""The engine on MongoDB: entries, the atomic solve update, rank data, cached top pages and the
per-day queries. The only module that names an entry field path or a board collection.

One document per (board, programmer) in ``entries.<board>``::

    {_id: <programmer id>, handle, groups: ["country:BD", "org:..."],
     days: {"<epoch day>": count}, last: {"<epoch day>": latest solve time that day},
     sums: {"<day>": score}, keys: {"<day>": sort key}, previous_sums: {"<day>": score}}

A solve runs one aggregation-pipeline update on the entry that adds the day's count and recomputes
the forward-dated sums and sort keys of every day the solve touches (see `leaderboard`), trimming
days that can no longer change anything so the document stays small. The same update copies the
old sums into `previous_sums`, so the caller learns both sides of the change from one atomic
operation and can move the programmer in the score histograms (the rank data) and the cached top
pages. All-time boards keep a single running total under the key ``all``.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.conf import settings
from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument, UpdateOne
from pymongo.collection import Collection
from pymongo.errors import DuplicateKeyError

from .. import mongo
from . import maths as leaderboard

TOP_SIZE = 100  # rows kept in a cached top page: the first page of the widest page size


@dataclass(frozen=True)
class SolveEvent:
    """One counted solve, as the engine sees it."""

    programmer_id: int
    handle: str
    groups: tuple[str, ...]
    day: int
    value: int
    at: dt.datetime


def board_key(window: leaderboard.Window, day: int) -> str:
    """The field name of a board day: the epoch day, or ``all`` for all-time boards."""
    return leaderboard.ALL_TIME_KEY if window.is_all_time else str(day)


def history_from(today: int) -> int:
    """The oldest day whose final board is kept."""
    return today - settings.LEADERBOARD_HISTORY_DAYS


def counts_from(window: leaderboard.Window, today: int) -> int:
    """The oldest daily count that a solve accepted today can still need."""
    return today - settings.LEADERBOARD_MAX_LATE_DAYS - window.span


# --- collections and their indexes ------------------------------------------------------------


def entries(board_slug: str) -> Collection:
    # Board slugs are validated SlugFields, so they are safe in a collection name.
    return mongo.get_db()[f"entries.{board_slug}"]


def histograms() -> Collection:
    return mongo.get_db()["histograms"]


def tops() -> Collection:
    return mongo.get_db()["tops"]


def indexes(board_slugs: Iterable[str]) -> dict[str, list[IndexModel]]:
    """The indexes of every board's entries collection.

    `sums.$**` serves `sums.D` predicates (who is on the board of day D); `keys.$**` serves the
    order of day D (sort and keyset pagination on `keys.D`). A wildcard index serves one field
    per query, so each query filters and sorts on a single per-day field.
    """
    wildcard = [
        IndexModel([("sums.$**", ASCENDING)], name="sums_wildcard"),
        IndexModel([("keys.$**", ASCENDING)], name="keys_wildcard"),
    ]
    return {f"entries.{slug}": wildcard for slug in board_slugs}


def day_id(board_slug: str, day_key: str, scope: str = "") -> str:
    """The `_id` of a board day's rank data and cached top page (per group)."""
    return f"{board_slug}:{day_key}" + (f":{scope}" if scope else "")


def listing_order(rows: Iterable[dict]) -> list[dict]:
    """Rows (`key`, `handle`) as the board lists them: the better key first, and inside the same
    key (same score, reached the same second) by handle."""
    return sorted(rows, key=lambda row: (-row["key"], row["handle"].lower()))


# --- the update pipeline -------------------------------------------------------------------


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
    """`leaderboard.sort_key` as an aggregation expression."""
    seconds = {
        "$toLong": {"$floor": {"$divide": [{"$subtract": [reached, leaderboard.KEY_EPOCH]}, 1000]}}
    }
    return {
        "$add": [
            {"$multiply": [{"$min": [score, leaderboard.MAX_SCORE]}, 2**leaderboard.TIME_BITS]},
            {"$subtract": [2**leaderboard.TIME_BITS - 1, seconds]},
        ]
    }


def _window_days(start: int, end: int) -> dict:
    return {
        "$filter": {
            "input": "$_w",
            "cond": {"$and": [{"$gte": ["$$this.d", start]}, {"$lte": ["$$this.d", end]}]},
        }
    }


def solve_pipeline(window: leaderboard.Window, event: SolveEvent, today: int) -> list[dict]:
    """The one atomic update that counts `event` on a board with this window."""
    identity = {"handle": event.handle, "groups": list(event.groups)}
    if window.is_all_time:
        key = leaderboard.ALL_TIME_KEY
        total = {"$add": [{"$ifNull": [_field(key, "sums"), 0]}, event.value]}
        latest = {"$max": [{"$ifNull": [_field(key, "last"), event.at]}, event.at]}
        return [
            {
                "$set": {
                    **identity,
                    "previous_sums": {key: {"$ifNull": [_field(key, "sums"), 0]}},
                    "sums": {key: total},
                    "last": {key: latest},
                }
            },
            {"$set": {"keys": {key: _key_expression(_field(key, "sums"), _field(key, "last"))}}},
        ]

    day = str(event.day)
    days = window.affected_days(event.day)
    starts = {d: window.start(d) for d in days}
    return [
        {
            "$set": {
                **identity,
                "previous_sums": {str(d): {"$ifNull": [_field(str(d), "sums"), 0]} for d in days},
                "days": {
                    "$mergeObjects": [
                        {"$ifNull": ["$days", {}]},
                        {day: {"$add": [{"$ifNull": [_field(day, "days"), 0]}, event.value]}},
                    ]
                },
                "last": {
                    "$mergeObjects": [
                        {"$ifNull": ["$last", {}]},
                        {day: {"$max": [{"$ifNull": [_field(day, "last"), event.at]}, event.at]}},
                    ]
                },
            }
        },
        {
            "$set": {
                "days": _trimmed("days", counts_from(window, today)),
                "last": _trimmed("last", counts_from(window, today)),
                "sums": _trimmed("sums", history_from(today)),
                "keys": _trimmed("keys", history_from(today)),
            }
        },
        {
            "$set": {
                "_w": {
                    "$map": {
                        "input": {"$objectToArray": "$days"},
                        "in": {
                            "d": {"$toInt": "$$this.k"},
                            "n": "$$this.v",
                            "t": {"$getField": {"field": "$$this.k", "input": "$last"}},
                        },
                    }
                }
            }
        },
        {
            "$set": {
                "sums": {
                    "$mergeObjects": [
                        "$sums",
                        {
                            str(d): {
                                "$sum": {
                                    "$map": {"input": _window_days(starts[d], d), "in": "$$this.n"}
                                }
                            }
                            for d in days
                        },
                    ]
                },
                "keys": {
                    "$mergeObjects": [
                        "$keys",
                        {
                            str(d): _key_expression(
                                {
                                    "$sum": {
                                        "$map": {
                                            "input": _window_days(starts[d], d),
                                            "in": "$$this.n",
                                        }
                                    }
                                },
                                {
                                    "$max": {
                                        "$map": {
                                            "input": _window_days(starts[d], d),
                                            "in": "$$this.t",
                                        }
                                    }
                                },
                            )
                            for d in days
                        },
                    ]
                },
            }
        },
        {"$unset": "_w"},
    ]


def entry_apply_solve(
    board_slug: str, window: leaderboard.Window, event: SolveEvent, today: int
) -> dict:
    """Count a solve on one board: the entry, then its rank data and cached top pages.

    Returns the changed days as {day key: (old score, new score)}.
    """
    days = (
        [leaderboard.ALL_TIME_KEY]
        if window.is_all_time
        else [str(d) for d in window.affected_days(event.day)]
    )
    entry = entries(board_slug).find_one_and_update(
        {"_id": event.programmer_id},
        solve_pipeline(window, event, today),
        projection={
            "previous_sums": 1,
            **{f"sums.{d}": 1 for d in days},
            **{f"keys.{d}": 1 for d in days},
        },
        upsert=True,
        return_document=ReturnDocument.AFTER,
    )
    changes = {
        d: (entry["previous_sums"].get(d, 0), entry["sums"][d])
        for d in days
        if entry["previous_sums"].get(d, 0) != entry["sums"][d]
    }
    scopes = ["", *event.groups]
    histograms_move(board_slug, changes, scopes)
    visible_days = [d for d in changes if d == leaderboard.ALL_TIME_KEY or int(d) <= today]
    row_of = {
        d: {"pid": event.programmer_id, "handle": event.handle, "key": entry["keys"][d]}
        for d in visible_days
    }
    tops_merge(
        board_slug, {day_id(board_slug, d, s): [row_of[d]] for d in visible_days for s in scopes}
    )
    return changes


# --- rank data: score histograms -----------------------------------------------------------


def histograms_move(
    board_slug: str, changes: dict[str, tuple[int, int]], scopes: Iterable[str]
) -> None:
    """Move one programmer from their old score to the new one in each day's histograms."""
    operations = []
    for day_key, (old, new) in changes.items():
        moves = {f"scores.{new}": 1} if new > 0 else {}
        if old > 0:
            moves[f"scores.{old}"] = -1
        for scope in scopes:
            operations.append(
                UpdateOne(
                    {"_id": day_id(board_slug, day_key, scope)},
                    {
                        "$inc": moves,
                        "$setOnInsert": {"board": board_slug, "day": day_key, "scope": scope},
                    },
                    upsert=True,
                )
            )
    if operations:
        histograms().bulk_write(operations, ordered=False)


def histogram_read(board_slug: str, day_key: str, scope: str = "") -> dict[int, int]:
    """{score: number of programmers} of one board day (one small read)."""
    document = histograms().find_one({"_id": day_id(board_slug, day_key, scope)}) or {}
    return {
        int(score): n for score, n in document.get("scores", {}).items() if n > 0 and int(score) > 0
    }


# --- the cached top page -------------------------------------------------------------------


def merge_rows(current: list[dict], new: list[dict]) -> list[dict]:
    """Rows of both lists, each programmer once with their best key, best first, TOP_SIZE long.

    Scores for a day only grow, so the best key seen for a programmer is their current one.
    """
    best: dict[int, dict] = {}
    for row in [*current, *new]:
        if row["pid"] not in best or row["key"] > best[row["pid"]]["key"]:
            best[row["pid"]] = row
    return listing_order(best.values())[:TOP_SIZE]


def _top_write(document: dict | None, _id: str, rows: list[dict], complete: bool) -> bool:
    """Compare-and-swap one top document. False when somebody else changed it first."""
    if document is None:
        try:
            tops().insert_one({"_id": _id, "rows": rows, "complete": complete, "version": 1})
        except DuplicateKeyError:
            return False
        return True
    result = tops().update_one(
        {"_id": _id, "version": document["version"]},
        {
            "$set": {"rows": rows, "complete": complete or document["complete"]},
            "$inc": {"version": 1},
        },
    )
    return result.matched_count == 1


def tops_merge(board_slug: str, new_rows: dict[str, list[dict]]) -> None:
    """Merge rows into cached top pages (creating them, still incomplete, when missing)."""
    if not new_rows:
        return
    documents = {doc["_id"]: doc for doc in tops().find({"_id": {"$in": list(new_rows)}})}
    for _id, rows in new_rows.items():
        document = documents.get(_id)
        while True:
            current = document["rows"] if document else []
            merged = merge_rows(current, rows)
            if document is not None and merged == current:
                break
            if _top_write(document, _id, merged, complete=False):
                break
            document = tops().find_one({"_id": _id})


def scope_filter(scope: str) -> dict:
    return {"groups": scope} if scope else {}


def top_rows(board_slug: str, day_key: str, scope: str = "") -> list[dict]:
    """The cached top page of a board day: one small read once it is built.

    The first read builds it from the entries and merges whatever solves wrote into it meanwhile,
    so a solve that lands between the query and the write is never lost.
    """
    _id = day_id(board_slug, day_key, scope)
    document = tops().find_one({"_id": _id})
    if document is not None and document["complete"]:
        return document["rows"]
    field = _key_field(day_key)
    collection, projection = entries(board_slug), {"handle": 1, field: 1}
    found = list(
        collection.find({field: {"$gt": 0}, **scope_filter(scope)}, projection)
        .sort(field, DESCENDING)
        .limit(TOP_SIZE)
    )
    if len(found) == TOP_SIZE:
        # The index orders equal keys arbitrarily and the limit may cut through them: take the
        # whole group of the last key, and let merge_rows keep the first by handle.
        edge = found[-1]["keys"][day_key]
        found += collection.find({field: edge, **scope_filter(scope)}, projection)
    queried = [
        {"pid": entry["_id"], "handle": entry["handle"], "key": entry["keys"][day_key]}
        for entry in found
    ]
    while True:
        merged = merge_rows(document["rows"] if document else [], queried)
        if _top_write(document, _id, merged, complete=True):
            return merged
        document = tops().find_one({"_id": _id})


def tops_forget(board_slug: str) -> None:
    """Drop a board's cached top pages (after a rebuild, or when somebody leaves the board)."""
    tops().delete_many({"_id": {"$regex": f"^{re.escape(board_slug)}:"}})


# --- per-day reads --------------------------------------------------------------------------


def _key_field(day_key: str) -> str:
    return f"keys.{day_key}"


def _row(document: dict, day_key: str) -> dict:
    return {"pid": document["_id"], "handle": document["handle"], "key": document["keys"][day_key]}


def entry_key(board_slug: str, programmer_id: int, day_key: str, scope: str = "") -> int:
    """A programmer's sort key on a board day (0 when not on it, or not in the group)."""
    entry = entries(board_slug).find_one(
        {"_id": programmer_id, **scope_filter(scope)}, {_key_field(day_key): 1}
    )
    return (entry or {}).get("keys", {}).get(day_key, 0)


def entry_sums(board_slug: str, programmer_id: int, day_keys: list[str]) -> dict[str, int]:
    """A programmer's scores on these board days (the forecast, for days to come)."""
    entry = entries(board_slug).find_one(
        {"_id": programmer_id}, {f"sums.{key}": 1 for key in day_keys}
    )
    return (entry or {}).get("sums", {})


def entries_keys(
    board_slug: str, programmer_ids: Iterable[int], day_key: str, scope: str = ""
) -> dict[int, int]:
    """{programmer id: sort key} of a board day for those on it (one `$in` read)."""
    found = entries(board_slug).find(
        {"_id": {"$in": list(programmer_ids)}, **scope_filter(scope)}, {_key_field(day_key): 1}
    )
    return {
        doc["_id"]: doc["keys"][day_key] for doc in found if doc.get("keys", {}).get(day_key, 0) > 0
    }


def rows_from(
    board_slug: str, day_key: str, scope: str, histogram: dict[int, int], offset: int, limit: int
) -> list[dict]:
    """`limit` rows from 0-based `offset`: a keyset range below the page's first score, so the
    index skips everybody with a better score and only the page's own tie group is stepped over."""
    score, above = leaderboard.score_at_offset(histogram, offset)
    field_name = _key_field(day_key)
    collection = entries(board_slug)
    projection = {"handle": 1, field_name: 1}
    ceiling = leaderboard.score_floor_key(score + 1)
    page = list(
        collection.find({field_name: {"$gt": 0, "$lt": ceiling}, **scope_filter(scope)}, projection)
        .sort(field_name, DESCENDING)
        .skip(offset - above)
        .limit(limit)
    )
    rows = [_row(doc, day_key) for doc in page]
    return _edges_by_handle(board_slug, rows, day_key, scope, offset - above) if rows else []


def _tie_group(board_slug: str, day_key: str, scope: str, key: int) -> list[dict]:
    """Everybody with exactly this sort key, in listing order."""
    field_name = _key_field(day_key)
    found = entries(board_slug).find(
        {field_name: key, **scope_filter(scope)}, {"handle": 1, field_name: 1}
    )
    return listing_order(_row(doc, day_key) for doc in found)


def _edges_by_handle(
    board_slug: str, page: list[dict], day_key: str, scope: str, skipped: int
) -> list[dict]:
    """The page with the right members of the tie groups its edges cut through.

    The index orders entries with equal keys (same score, reached the same second) arbitrarily,
    but the board lists them by handle. Such a group at the top of the page ends on it, so the page
    holds its last members by handle; one at the bottom starts on it, so the page holds its first.
    Only a page that lies wholly inside one group needs to count how much of it came before.
    """
    first, last = page[0]["key"], page[-1]["key"]
    if first == last:
        ceiling = leaderboard.score_floor_key(leaderboard.key_score(first) + 1)
        ahead = entries(board_slug).count_documents(
            {_key_field(day_key): {"$gt": first, "$lt": ceiling}, **scope_filter(scope)}
        )
        start = skipped - ahead
        return _tie_group(board_slug, day_key, scope, first)[start : start + len(page)]
    on_page_first = sum(1 for row in page if row["key"] == first)
    on_page_last = sum(1 for row in page if row["key"] == last)
    middle = [row for row in page if row["key"] not in (first, last)]
    return (
        _tie_group(board_slug, day_key, scope, first)[-on_page_first:]
        + middle
        + _tie_group(board_slug, day_key, scope, last)[:on_page_last]
    )


def ahead_in_tie(board_slug: str, day_key: str, scope: str, handle: str, key: int) -> int:
    """How many with the same score are listed before a programmer (earlier, or the same time
    and an earlier handle)."""
    field_name = _key_field(day_key)
    ceiling = leaderboard.score_floor_key(leaderboard.key_score(key) + 1)
    earlier = entries(board_slug).count_documents(
        {field_name: {"$gt": key, "$lt": ceiling}, **scope_filter(scope)}
    )
    same_time = _tie_group(board_slug, day_key, scope, key)
    return earlier + sum(1 for row in same_time if row["handle"].lower() < handle.lower())


def neighbour_rows(
    board_slug: str, day_key: str, scope: str, handle: str, key: int, around: int
) -> tuple[list[dict], list[dict]]:
    """The `around` rows just above and just below a programmer (keyset range queries)."""
    field_name = _key_field(day_key)
    collection = entries(board_slug)
    projection = {"handle": 1, field_name: 1}

    def nearest(key_range: dict, direction: int) -> list[dict]:
        """The `around` nearest keys in one direction, plus everybody sharing the farthest key
        (the index orders equal keys arbitrarily; the handle decides who is nearer)."""
        found = [
            _row(doc, day_key)
            for doc in collection.find({field_name: key_range, **scope_filter(scope)}, projection)
            .sort(field_name, direction)
            .limit(around)
        ]
        if len(found) < around:
            return found
        edge = found[-1]["key"]
        return [row for row in found if row["key"] != edge] + _tie_group(
            board_slug, day_key, scope, edge
        )

    own = handle.lower()
    same = _tie_group(board_slug, day_key, scope, key)
    above = listing_order(
        nearest({"$gt": key}, ASCENDING) + [r for r in same if r["handle"].lower() < own]
    )[-around:]
    below = listing_order(
        nearest({"$gt": 0, "$lt": key}, DESCENDING) + [r for r in same if r["handle"].lower() > own]
    )[:around]
    return above, below


def rows_in_order(board_slug: str, day_key: str) -> Iterator[dict]:
    """Every row of a board day in listing order (background work: it reads the whole board)."""
    field_name = _key_field(day_key)
    cursor = (
        entries(board_slug)
        .find({field_name: {"$gt": 0}}, {"handle": 1, field_name: 1})
        .sort(field_name, DESCENDING)
    )
    for _key, tied in itertools.groupby(cursor, key=lambda doc: doc["keys"][day_key]):
        yield from listing_order(_row(doc, day_key) for doc in tied)


# --- leaving and coming back ----------------------------------------------------------------


def entry_remove(board_slug: str, programmer_id: int) -> None:
    """Delete a programmer's entry on a board and move them out of every histogram it counts in."""
    entry = entries(board_slug).find_one_and_delete(
        {"_id": programmer_id}, projection={"sums": 1, "groups": 1}
    )
    if entry is None:
        return
    changes = {day: (score, 0) for day, score in entry.get("sums", {}).items() if score > 0}
    histograms_move(board_slug, changes, ["", *entry.get("groups", [])])


def entry_restore(board_slug: str, document: dict) -> None:
    """Put a programmer back on a board with an entry computed from their solves."""
    entry_remove(board_slug, document["_id"])  # a stray entry would be counted twice
    entries(board_slug).replace_one({"_id": document["_id"]}, document, upsert=True)
    changes = {day: (0, score) for day, score in document["sums"].items() if score > 0}
    histograms_move(board_slug, changes, ["", *document["groups"]])
    # Top pages are small and rebuilt on the next read: simpler than placing them in each.
    tops_forget(board_slug)


def entry_leave_tops(programmer_id: int) -> None:
    """Drop the cached top pages that list a programmer (the next read rebuilds them)."""
    tops().delete_many({"rows.pid": programmer_id})

"""Leaderboard entries on MongoDB: the atomic solve update, rank data and the cached top page.

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
import re
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from pymongo import DESCENDING, ReturnDocument, UpdateOne
from pymongo.errors import DuplicateKeyError

from . import leaderboard, mongo

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
    entry = mongo.entries(board_slug).find_one_and_update(
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
        board_slug, {top_id(board_slug, d, s): [row_of[d]] for d in visible_days for s in scopes}
    )
    return changes


# --- rank data: score histograms -----------------------------------------------------------


def histogram_id(board_slug: str, day_key: str, scope: str = "") -> str:
    return f"{board_slug}:{day_key}" + (f":{scope}" if scope else "")


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
                    {"_id": histogram_id(board_slug, day_key, scope)},
                    {
                        "$inc": moves,
                        "$setOnInsert": {"board": board_slug, "day": day_key, "scope": scope},
                    },
                    upsert=True,
                )
            )
    if operations:
        mongo.histograms().bulk_write(operations, ordered=False)


def histogram_read(board_slug: str, day_key: str, scope: str = "") -> dict[int, int]:
    """{score: number of programmers} of one board day (one small read)."""
    document = mongo.histograms().find_one({"_id": histogram_id(board_slug, day_key, scope)}) or {}
    return {
        int(score): n for score, n in document.get("scores", {}).items() if n > 0 and int(score) > 0
    }


# --- the cached top page -------------------------------------------------------------------


def top_id(board_slug: str, day_key: str, scope: str = "") -> str:
    return f"{board_slug}:{day_key}" + (f":{scope}" if scope else "")


def merge_rows(current: list[dict], new: list[dict]) -> list[dict]:
    """Rows of both lists, each programmer once with their best key, best first, TOP_SIZE long.

    Scores for a day only grow, so the best key seen for a programmer is their current one.
    """
    best: dict[int, dict] = {}
    for row in [*current, *new]:
        if row["pid"] not in best or row["key"] > best[row["pid"]]["key"]:
            best[row["pid"]] = row
    return sorted(best.values(), key=lambda row: (-row["key"], row["handle"].lower()))[:TOP_SIZE]


def _top_write(document: dict | None, _id: str, rows: list[dict], complete: bool) -> bool:
    """Compare-and-swap one top document. False when somebody else changed it first."""
    if document is None:
        try:
            mongo.tops().insert_one({"_id": _id, "rows": rows, "complete": complete, "version": 1})
        except DuplicateKeyError:
            return False
        return True
    result = mongo.tops().update_one(
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
    documents = {doc["_id"]: doc for doc in mongo.tops().find({"_id": {"$in": list(new_rows)}})}
    for _id, rows in new_rows.items():
        document = documents.get(_id)
        while True:
            current = document["rows"] if document else []
            merged = merge_rows(current, rows)
            if document is not None and merged == current:
                break
            if _top_write(document, _id, merged, complete=False):
                break
            document = mongo.tops().find_one({"_id": _id})


def scope_filter(scope: str) -> dict:
    return {"groups": scope} if scope else {}


def top_rows(board_slug: str, day_key: str, scope: str = "") -> list[dict]:
    """The cached top page of a board day: one small read once it is built.

    The first read builds it from the entries and merges whatever solves wrote into it meanwhile,
    so a solve that lands between the query and the write is never lost.
    """
    _id = top_id(board_slug, day_key, scope)
    document = mongo.tops().find_one({"_id": _id})
    if document is not None and document["complete"]:
        return document["rows"]
    field = f"keys.{day_key}"
    collection, projection = mongo.entries(board_slug), {"handle": 1, field: 1}
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
        document = mongo.tops().find_one({"_id": _id})


def tops_forget(board_slug: str) -> None:
    """Drop a board's cached top pages (after a rebuild, or when somebody leaves the board)."""
    mongo.tops().delete_many({"_id": {"$regex": f"^{re.escape(board_slug)}:"}})

"""The maths as MongoDB aggregation expressions, the parts the entry update pipelines are built
of (`entries`): sort keys, and dropping the day keys an entry no longer needs. Pure: each builds
an expression over the documents and variables it is given, and names no field of its own.

The trimming relies on the pipeline's ``$$since``: how many days ago the entry was last trimmed
(0: already today).
"""

from __future__ import annotations

from . import maths

# An entry last trimmed this few days ago drops its old days by name (`trimmed_today`): enough
# for a programmer who solves every few days; each name costs a little on every solve, as the
# embedded server checks the whole pipeline whichever branch runs.
TRIM_BY_NAME = 3


def get_field(name: str, document: str) -> dict:
    """A field of `document` (a field path without its `$`) by name: day keys are numbers."""
    return {"$getField": {"field": name, "input": f"${document}"}}


def _trimmed(document: dict, oldest: int) -> dict:
    """The sub-document without the day keys older than `oldest`, looking at every key. A key
    that is not a day number (only damage puts one there) goes too, instead of failing the
    update, and with it every solve of its programmer on the board."""
    day = {"$convert": {"input": "$$this.k", "to": "int", "onError": None, "onNull": None}}
    return {
        "$arrayToObject": {
            "$filter": {"input": {"$objectToArray": document}, "cond": {"$gte": [day, oldest]}}
        }
    }


def _without_days(document: dict, days: range) -> dict:
    """The sub-document without these day keys (absent ones are no matter)."""
    for day in days:
        document = {"$setField": {"field": str(day), "input": document, "value": "$$REMOVE"}}
    return document


def trimmed_today(document: str, oldest: int) -> dict:
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


def key_tail(reached: dict) -> dict:
    """The time part of `maths.sort_key` as an aggregation expression."""
    seconds = {
        "$toLong": {"$floor": {"$divide": [{"$subtract": [reached, maths.KEY_EPOCH]}, 1000]}}
    }
    return {"$subtract": [2**maths.TIME_BITS - 1, seconds]}


def key_of(score: dict | str, tail: dict | str) -> dict:
    """`maths.sort_key` as an aggregation expression, from the score and `key_tail`."""
    return {"$add": [{"$multiply": [{"$min": [score, maths.MAX_SCORE]}, 2**maths.TIME_BITS]}, tail]}


def key_expression(score: dict | str, reached: dict) -> dict:
    """`maths.sort_key` of a score reached at a time, as an aggregation expression."""
    return key_of(score, key_tail(reached))

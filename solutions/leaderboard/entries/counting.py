"""How a solve counts in an entry: the one aggregation-pipeline update it runs there
(`solve_pipeline`), which adds the day's count and recomputes the forward-dated sums and sort
keys of every day the solve touches (see `maths`), trimming, once a day, days that can no longer
change anything. The update is idempotent by the solve's id (``applied``). The fields are those
of the package's docstring; nothing here reads or writes MongoDB.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from .. import maths
from ..days_kept import counts_from, history_from, streaks_from
from ..expressions import get_field, key_expression, key_of, key_tail, trimmed_today

APPLIED_KEPT = 64  # solve ids an entry remembers: far more than can be in flight at once


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
    problem: str = ""  # a scored report's problem (best-score boards)


def _all_time_counting(event: SolveEvent) -> dict:
    key = maths.ALL_TIME_KEY
    total = {"$add": [{"$ifNull": [get_field(key, "sums"), 0]}, event.value]}
    latest = {"$max": [{"$ifNull": [get_field(key, "last"), event.at]}, event.at]}
    return {
        "$let": {
            "vars": {"total": total, "latest": latest},
            "in": {
                "sums": {key: "$$total"},
                "last": {key: "$$latest"},
                "keys": {key: key_expression("$$total", "$$latest")},
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
    count = {"$add": [{"$ifNull": [get_field(day, "days"), 0]}, event.value]}
    latest = {"$max": [{"$ifNull": [get_field(day, "last"), event.at]}, event.at]}
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
        windows["tail"] = key_tail("$$latest")
        return {"$map": {"input": "$$scores", "in": key_of("$$this", "$$tail")}}
    windows["times"] = [f"$$last.{d}" for d in counted]
    reached = {"$max": {"$slice": ["$$times", *span]}}
    key = key_expression({"$arrayElemAt": ["$$scores", "$$i"]}, reached)
    return {"$map": {"input": each_day, "as": "i", "in": key}}


def _window_changed(window: maths.Window, names: list[str], keys: dict, today: int) -> dict:
    """The fields a counted solve sets: counts (trimmed once a day to those a solve can still
    need), and the sums and keys of the days `names` merged into the kept ones."""
    return {
        "days": trimmed_today("$$days", counts_from(window, today)),
        "last": trimmed_today("$$last", counts_from(window, today)),
        "sums": {
            "$mergeObjects": [
                trimmed_today("$sums", history_from(today)),
                {"$arrayToObject": {"$zip": {"inputs": [names, "$$scores"]}}},
            ]
        },
        "keys": {
            "$mergeObjects": [
                trimmed_today("$keys", history_from(today)),
                {"$arrayToObject": {"$zip": {"inputs": [names, keys]}}},
            ]
        },
        "trimmed": today,
    }


def _streak_counting(window: maths.Window, event: SolveEvent, today: int) -> dict:
    """A solve on a streak board (see `maths.streak_scores`): the day's first solve time, then
    the run of solve days that now holds the day: from the first day of the run holding the day
    before (``began``; else the day itself) to the day before the first one after it with no
    solve, looked for up to the last day that can have one. Then the current streak of each day
    of the run from the solve's day on and of the day after it, or, all time, the best of the
    longest streak so far and this run (the bigger key: longer, else reached earlier). The
    expression reads a field path a day up to that last day, as `_window_counting` does,
    whatever the length of the run."""
    day = str(event.day)
    last = max(today, event.day) + 1  # no solve day after it (a judge's clock may run ahead)
    first = {"$min": [{"$ifNull": [get_field(day, "first"), event.at]}, event.at]}
    # `$$run`: how many days in a row from the solve's are solve days (the first with none).
    after_run = {"$indexOfArray": ["$$times", None]}
    run = {"$cond": [{"$eq": [after_run, -1]}, last - event.day + 1, after_run]}
    oldest = streaks_from(today)
    run_began = _each_day(event.day, last, "$$run", "$$start")
    changed = {
        "first": trimmed_today("$$first", oldest),
        "began": {"$mergeObjects": [trimmed_today("$began", oldest), run_began]},
        "trimmed": today,
        **(_longest_streak(event) if window.is_all_time else _current_streaks(event, last, today)),
    }
    return {
        "$let": {
            "vars": {
                "first": {"$mergeObjects": [{"$ifNull": ["$first", {}]}, {day: first}]},
                "start": {"$ifNull": [get_field(str(event.day - 1), "began"), event.day]},
                "since": {"$subtract": [today, {"$ifNull": ["$trimmed", 0]}]},
            },
            "in": {
                "$let": {
                    "vars": {"times": [f"$$first.{d}" for d in range(event.day, last + 1)]},
                    "in": {"$let": {"vars": {"run": run}, "in": changed}},
                }
            },
        }
    }


def _streak_at(event: SolveEvent, i: dict | str) -> tuple[dict, dict]:
    """(the streak of the i-th day from the solve's, when it was reached), inside the `$let`s
    of `_streak_counting`: the day after the run keeps the run's."""
    j = {"$min": [i, {"$subtract": ["$$run", 1]}]}
    length = {"$subtract": [{"$add": [j, event.day + 1]}, "$$start"]}
    return length, {"$arrayElemAt": ["$$times", j]}


def _each_day(first_day: int, last: int, count: dict | str, value: dict | str) -> dict:
    """{day name: value} of the first `count` days from `first_day` (`$$i` the i-th), up to the
    day after `last`."""
    names = [str(d) for d in range(first_day, last + 2)]
    pair = {"k": {"$arrayElemAt": [names, "$$i"]}, "v": value}
    days = {"$map": {"input": {"$range": [0, count]}, "as": "i", "in": pair}}
    return {"$arrayToObject": days}


def _longest_streak(event: SolveEvent) -> dict:
    """The sum and key of an all-time streak board: the best of the longest streak so far and
    the run that now holds the solve's day (the bigger key: longer, else reached earlier)."""
    length, reached = _streak_at(event, {"$subtract": ["$$run", 1]})
    key = maths.ALL_TIME_KEY
    best = {"$max": [{"$ifNull": [get_field(key, "keys"), 0]}, key_expression(length, reached)]}
    return {
        "sums": {key: {"$max": [{"$ifNull": [get_field(key, "sums"), 0]}, length]}},
        "keys": {key: best},
    }


def _current_streaks(event: SolveEvent, last: int, today: int) -> dict:
    """The sums and keys of a streak board over a window: the current streak of each day of the
    run from the solve's day on and of the day after it."""
    length, reached = _streak_at(event, "$$i")
    days = {"$add": ["$$run", 1]}
    history = history_from(today)
    sums = _each_day(event.day, last, days, length)
    keys = _each_day(event.day, last, days, key_expression(length, reached))
    return {
        "sums": {"$mergeObjects": [trimmed_today("$sums", history), sums]},
        "keys": {"$mergeObjects": [trimmed_today("$keys", history), keys]},
    }


def _best_counting(window: maths.Window, event: SolveEvent, today: int) -> dict:
    """A scored report on a best-score board (see `maths.best_total`): it replaces the best of
    its (problem, day) when better (`maths.best_better`; all time, the problem's one best), the
    bests older than a late report can still need are dropped, then each day the report touches
    is recomputed from the bests inside its window: per problem the biggest value and the
    earliest moment it was reported, their sum, and the latest of those moments. The bests kept
    are at most (the window's days and the late days) × the problems reported in them."""
    bucket = maths.best_bucket(window, event.day)
    mine = {"$and": [{"$eq": ["$$this.p", event.problem]}, {"$eq": ["$$this.d", bucket]}]}
    kept = {"$ifNull": ["$best", []]}
    best = _best_replaced(event, bucket, mine, kept)
    if window.is_all_time:
        days = [{"k": maths.ALL_TIME_KEY, "a": bucket, "b": bucket}]
    else:
        oldest = counts_from(window, today)
        best = {"$filter": {"input": best, "cond": {"$gte": ["$$this.d", oldest]}}}
        days = [{"k": str(d), "a": window.start(d), "b": d} for d in window.affected_days(bucket)]
    totals = {"$map": {"input": {"$literal": days}, "as": "day", "in": _best_of_day()}}
    changed = _best_changed(window, today)
    was = {"$arrayElemAt": [{"$filter": {"input": kept, "cond": mine}}, 0]}
    since = {"$subtract": [today, {"$ifNull": ["$trimmed", 0]}]}
    return {
        "$let": {
            "vars": {"was": was, "since": since},
            "in": {
                "$let": {
                    "vars": {"best": best},
                    "in": {"$let": {"vars": {"totals": totals}, "in": changed}},
                }
            },
        }
    }


def _best_replaced(event: SolveEvent, bucket: int, mine: dict, kept: dict) -> dict:
    """The bests with the report's in place of the best of its (problem, day) `$$was` when it is
    better: a bigger value, or the same one reported earlier."""
    new = {"p": {"$literal": event.problem}, "d": bucket, "v": event.value, "t": event.at}
    better = {
        "$or": [
            {"$eq": [{"$type": "$$was"}, "missing"]},
            {"$gt": [event.value, "$$was.v"]},
            {"$and": [{"$eq": [event.value, "$$was.v"]}, {"$lt": [event.at, "$$was.t"]}]},
        ]
    }
    others = {"$filter": {"input": kept, "cond": {"$not": [mine]}}}
    return {"$cond": [better, {"$concatArrays": [others, [new]]}, kept]}


def _best_changed(window: maths.Window, today: int) -> dict:
    """The entry's fields after a report: the bests `$$best`, and the sums and sort keys of the
    days `$$totals` recomputed (over the days kept, trimmed once a day, unless all time)."""
    pairs = {
        name: {"$arrayToObject": {"$map": {"input": "$$totals", "in": {"k": "$$this.k", "v": v}}}}
        for name, v in (("s", "$$this.s"), ("key", "$$this.key"))
    }
    if window.is_all_time:
        return {"best": "$$best", "sums": pairs["s"], "keys": pairs["key"]}
    history = history_from(today)
    return {
        "best": "$$best",
        "sums": {"$mergeObjects": [trimmed_today("$sums", history), pairs["s"]]},
        "keys": {"$mergeObjects": [trimmed_today("$keys", history), pairs["key"]]},
        "trimmed": today,
    }


def _best_of_day() -> dict:
    """{k: the day's name, s: its total, key: its sort key} of the day `$$day` ({k, a: the first
    day of its window, b: the day}) from the bests `$$best`: per problem inside the window, the
    biggest value and the earliest moment it was reported."""
    inside = {
        "$filter": {
            "input": "$$best",
            "as": "r",
            "cond": {"$and": [{"$gte": ["$$r.d", "$$day.a"]}, {"$lte": ["$$r.d", "$$day.b"]}]},
        }
    }
    total = {"$sum": {"$map": {"input": "$$bests", "as": "r", "in": "$$r.v"}}}
    reached = {"$max": {"$map": {"input": "$$bests", "as": "r", "in": "$$r.t"}}}
    key = {"$cond": [{"$gt": ["$$total", 0]}, key_expression("$$total", reached), 0]}
    return {
        "$let": {
            "vars": {"inside": inside},
            "in": {
                "$let": {
                    "vars": {"bests": _best_per_problem()},
                    "in": {
                        "$let": {
                            "vars": {"total": total},
                            "in": {"k": "$$day.k", "s": "$$total", "key": key},
                        }
                    },
                }
            },
        }
    }


def _best_per_problem() -> dict:
    """[{v, t}] of the bests `$$inside` a day's window: per problem, the biggest value and the
    earliest moment it was reported."""
    problems = {"$setUnion": [{"$map": {"input": "$$inside", "as": "r", "in": "$$r.p"}}]}
    of_problem = {"$filter": {"input": "$$inside", "as": "r", "cond": {"$eq": ["$$r.p", "$$q"]}}}
    top = {"$max": {"$map": {"input": "$$mine", "as": "r", "in": "$$r.v"}}}
    at_top = {"$filter": {"input": "$$mine", "as": "r", "cond": {"$eq": ["$$r.v", "$$top"]}}}
    first = {"$min": {"$map": {"input": at_top, "as": "r", "in": "$$r.t"}}}
    return {
        "$map": {
            "input": problems,
            "as": "q",
            "in": {
                "$let": {
                    "vars": {"mine": of_problem},
                    "in": {"$let": {"vars": {"top": top}, "in": {"v": "$$top", "t": first}}},
                }
            },
        }
    }


def solve_pipeline(window: maths.Window, event: SolveEvent, today: int) -> list[dict]:
    """The one atomic update that counts `event` on a board with this window, once: an entry
    that already lists the solve's id is left exactly as it is. One stage (the embedded server
    copies the document at each stage)."""
    if window.best:
        counting = _best_counting(window, event, today)
    elif window.streak:
        counting = _streak_counting(window, event, today)
    elif window.is_all_time:
        counting = _all_time_counting(event)
    else:
        counting = _window_counting(window, event, today)
    applied = {"$ifNull": ["$applied", []]}
    changes = {
        "handle": event.handle,
        "groups": list(event.groups),
        "applied": {"$slice": [{"$concatArrays": [applied, [event.solve_id]]}, -APPLIED_KEPT]},
        "rev": {"$add": [{"$ifNull": ["$rev", 0]}, 1]},
        "placed": placed_kept(),
    }
    seen = {"$in": [event.solve_id, applied]}
    counted = {"$mergeObjects": ["$$ROOT", counting, changes]}
    return [{"$replaceWith": {"$cond": [seen, "$$ROOT", counted]}}]


_COMPACT = [("placed", "object"), ("placed.keys", "missing")]  # ``placed`` as ``{rev}`` alone


def placed_kept() -> dict:
    """``placed`` in full from the entry as it is (an expression), for the updates that change
    its keys, handle or groups: ``{rev}`` alone would otherwise stand for what they write."""
    compact = {"$and": [{"$eq": [{"$type": f"${path}"}, t]} for path, t in _COMPACT]}
    whole = {
        "keys": {"$ifNull": ["$keys", {}]},
        "handle": {"$ifNull": ["$handle", ""]},
        "groups": {"$ifNull": ["$groups", []]},
        "rev": {"$ifNull": ["$placed.rev", 0]},
    }
    return {"$cond": [compact, whole, "$placed"]}

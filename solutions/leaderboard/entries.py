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
     placed: {rev} or {keys, handle, groups, rev}}  # what the orders hold for this programmer

A streak board's entry (`maths.streak_scores`) keeps, instead of ``days`` and ``last``, its
recent solve days: ``first: {"<epoch day>": first solve time that day}`` and
``began: {"<epoch day>": first day of the run of solve days holding it}``, from `streaks_from`
on, which is all a late solve needs however long the streak; ``sums`` holds each day's current
streak (or ``all``, the longest).

A solve runs one aggregation-pipeline update on the entry (`solve_pipeline`) that adds the day's
count and recomputes the forward-dated sums and sort keys of every day the solve touches (see
`maths`), trimming, once a day, days that can no longer change anything. The update is idempotent
by the solve's id (``applied``): a retry after a fault counts nothing twice. The seed's query,
"the board of day D" sorted by ``keys.D`` (`entries_by_key`), is served by the wildcard index on
``keys.$**`` on real MongoDB; requests read the orders instead, and `verify` checks the orders
against that query.

Each entry records in ``placed`` what the orders hold for it and at which ``rev`` of the entry
(see `applier`, which moves the orders from ``placed`` to the entry's current keys): ``{rev}``
alone while they hold the entry as it is, which saves a third of its bytes; the update that
changes its keys, handle or groups writes ``placed`` out in full first (`_placed_kept`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from pymongo import ASCENDING, DESCENDING, IndexModel, UpdateOne
from pymongo.collection import Collection

from .. import mongo
from . import maths, moving, sets
from .days_kept import counts_from, history_from, streaks_from
from .expressions import get_field, key_expression, key_of, key_tail, trimmed_today

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


def board_key(window: maths.Window, day: int) -> str:
    """The field name of a board day: the epoch day, or ``all`` for all-time boards."""
    return maths.ALL_TIME_KEY if window.is_all_time else str(day)


# --- the collection and its indexes -----------------------------------------------------------


def entries(board_slug: str) -> Collection:
    # Board slugs are validated SlugFields, so they are safe in a collection name.
    return mongo.get_db()[f"entries.{board_slug}"]


def board_indexes(board_slugs: Iterable[str] | None = None) -> dict[str, list[IndexModel]]:
    """The indexes of the boards' entries collections (every board when `board_slugs` is None):
    `keys.$**` serves the seed's per-day query (`entries_by_key`) on real MongoDB. Nothing on a
    request path needs it (orders are read by `_id`), so it is built by the command, not at a
    process's first use, and only on a server that reads wildcard indexes (not the embedded
    one: `mongo.server_uses_wildcard_indexes`), where it would cost every entry written an
    index key that no query reads. There is no `sums.$**`: no query filters or sorts on a day's
    sums (its key orders by score first), and it would double the index keys of every solve."""
    if board_slugs is None:
        from ..models import Board  # the registry calls this once the apps are ready

        board_slugs = Board.objects.values_list("slug", flat=True)
    if not mongo.server_uses_wildcard_indexes():
        return {}
    wildcard = [IndexModel([("keys.$**", ASCENDING)], name="keys_wildcard")]
    return {f"entries.{slug}": wildcard for slug in board_slugs}


# --- the entry update pipeline ----------------------------------------------------------------


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


def solve_pipeline(window: maths.Window, event: SolveEvent, today: int) -> list[dict]:
    """The one atomic update that counts `event` on a board with this window, once: an entry
    that already lists the solve's id is left exactly as it is. One stage (the embedded server
    copies the document at each stage)."""
    if window.streak:
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
        "placed": _placed_kept(),
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
        kept = ("days", "last", "first", "began")  # what a solve adds to (none off the board)
        unset = [name for name in kept if name not in fields]
        changes = {name: {"$literal": value} for name, value in fields.items()}
        changes |= {"rev": {"$add": [{"$ifNull": ["$rev", 0]}, 1]}, "placed": _placed_kept()}
        update = [{"$set": changes}, *([{"$unset": unset}] if unset else [])]
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


def placed_as_is(entry: dict) -> dict:
    """``placed`` for an entry whose orders hold it as it is (a rebuild builds them so)."""
    return {"rev": entry.get("rev", 0)}


def placed_of(entry: dict) -> dict | None:
    """What the orders hold for an entry (None: nothing yet), ``{rev}`` written out in full."""
    placed = entry.get("placed")
    if placed is None or "keys" in placed:
        return placed
    if placed.get("rev", 0) != entry.get("rev", 0):
        raise ValueError(f"entry {entry.get('_id')}: placed at rev {placed} but the entry is not")
    return placement(entry)


def _placed_kept() -> dict:
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


_COMPACT = [("placed", "object"), ("placed.keys", "missing")]  # ``placed`` as ``{rev}`` alone
_PLACEMENT = {"handle": 1, "groups": 1, "keys": 1, "rev": 1, "placed": 1}


def entries_behind(board_slug: str, programmer_ids: list[int]) -> Iterator[tuple[dict, dict]]:
    """(entry, what the orders will hold for it) of those of these programmers whose orders are
    behind their entry on a board (one read)."""
    for entry in entries(board_slug).find({"_id": {"$in": programmer_ids}}, _PLACEMENT):
        now_placed = placement(entry)
        if placed_of(entry) != now_placed:
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
    old = _records_placed(placed_of(entry), pid, oldest_day)
    new = _records_placed(placement(entry), pid, oldest_day)
    return {
        place: moving.Move(old.get(place), new.get(place))
        for place in set(old) | set(new)
        if old.get(place) != new.get(place)
    }


def groups_joined(entry: dict, now_placed: dict) -> set[str]:
    """The groups an entry is in that the orders do not hold it in yet."""
    was_in = (placed_of(entry) or {}).get("groups", [])
    return set(now_placed["groups"]) - set(was_in)


def placed_record(behind: dict[str, list[tuple[dict, dict]]]) -> None:
    """Record in each entry what the orders now hold for it (one bulk a board), unless a later
    applier already recorded a newer revision: ``{rev}`` alone if the entry is still at it."""
    for board_slug, moved in behind.items():
        updates = []
        for entry, now_placed in moved:
            rev = entry.get("rev", 0)
            still = {"$eq": [{"$ifNull": ["$rev", 0]}, rev]}
            placed = {"$cond": [still, {"rev": rev}, {"$literal": now_placed}]}
            older = {"_id": entry["_id"], "placed.rev": {"$not": {"$gte": rev}}}
            updates.append(UpdateOne(older, [{"$set": {"placed": placed}}]))
        entries(board_slug).bulk_write(updates, ordered=False)


# --- the seed's query: a board day straight from the entries -------------------------------------


def entries_by_key(board_slug: str, day_key: str, scope: str = "") -> Iterator[sets.Member]:
    """The members of a board day in listing order by the seed's query over the entries,
    ``find({"keys.D": {"$gt": 0}}).sort({"keys.D": -1})``: what its order must hold (`verify`).
    Real MongoDB serves it from the wildcard index ``keys.$**``; the embedded server (SecantusDB
    0.7) never uses a wildcard index (so it has none, see `board_indexes`) and scans the
    collection. Rebuild-time, never on a request.

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

"""A board's entries and rank data computed from the `solves` log alone.

The incremental path (one solve at a time, `store.entry_apply_solve`) and this one must leave
exactly the same boards; `tests/test_rebuild.py` checks it on random streams with late and
repeated solves.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pymongo import ReplaceOne, UpdateOne

from . import maths, store


@dataclass(frozen=True)
class Identity:
    """Who an entry belongs to, as the boards show them."""

    programmer_id: int
    handle: str
    groups: tuple[str, ...]


def entry_from_solves(
    window: maths.Window,
    value_of: Callable[[int], int],
    who: Identity,
    solves: list[dict],
    today: int,
    time_zone: str,
) -> dict | None:
    """The entry a board should hold for a programmer, computed from their solves alone
    (`points` and `solved_at` of each): exactly what the incremental updates leave behind for
    every day still kept."""
    if not solves:
        return None
    daily: dict[int, int] = defaultdict(int)
    latest: dict[int, dt.datetime] = {}
    for solve in solves:
        day = maths.epoch_day(solve["solved_at"], time_zone)
        daily[day] += value_of(solve["points"])
        latest[day] = max(latest.get(day, solve["solved_at"]), solve["solved_at"])
    document = {"_id": who.programmer_id, "handle": who.handle, "groups": list(who.groups)}
    if window.is_all_time:
        key = maths.ALL_TIME_KEY
        total, reached = sum(daily.values()), max(latest.values())
        return {
            **document,
            "sums": {key: total},
            "last": {key: reached},
            "keys": {key: maths.sort_key(total, reached)},
        }
    oldest_kept = store.history_from(today)
    board_days = sorted({d for day in daily for d in window.affected_days(day) if d >= oldest_kept})
    sums = maths.window_sums(daily, window, board_days)
    oldest_count = store.counts_from(window, today)
    return {
        **document,
        "days": {str(d): n for d, n in daily.items() if d >= oldest_count},
        "last": {str(d): t for d, t in latest.items() if d >= oldest_count},
        "sums": {str(d): s for d, s in sums.items()},
        "keys": {
            str(d): maths.sort_key(s, maths.reached_at(latest, window, d)) for d, s in sums.items()
        },
    }


def histograms_from_entries(board_slug: str, documents: Iterable[dict]) -> dict[str, dict]:
    """Every histogram of a board, counted from its entries."""
    counts: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for document in documents:
        for day_key, score in document["sums"].items():
            if score > 0:
                for scope in ["", *document["groups"]]:
                    counts[(day_key, scope)][str(score)] += 1
    return {
        store.day_id(board_slug, day_key, scope): {
            "board": board_slug,
            "day": day_key,
            "scope": scope,
            "scores": dict(scores),
        }
        for (day_key, scope), scores in counts.items()
    }


@dataclass
class RebuildReport:
    board: str
    entries: int = 0
    changed: int = 0
    removed: int = 0
    histograms: int = 0
    changed_ids: list[int] = field(default_factory=list)


def board_rebuild(board_slug: str, wanted: dict[int, dict], dry_run: bool) -> RebuildReport:
    """Make a board's stored entries, histograms and top pages those computed (`wanted`,
    {programmer id: entry}); a dry run only reports what would change."""
    report = RebuildReport(board=board_slug)
    collection = store.entries(board_slug)
    current = {doc["_id"]: doc for doc in collection.find({}, {"previous_sums": 0})}
    report.entries = len(wanted)
    report.changed_ids = sorted(pid for pid, doc in wanted.items() if current.get(pid) != doc)
    report.changed = len(report.changed_ids)
    stale = [pid for pid in current if pid not in wanted]
    report.removed = len(stale)
    histograms = histograms_from_entries(board_slug, wanted.values())
    report.histograms = len(histograms)
    if dry_run:
        return report
    if report.changed_ids:
        collection.bulk_write(
            [ReplaceOne({"_id": pid}, wanted[pid], upsert=True) for pid in report.changed_ids]
        )
    if stale:
        collection.delete_many({"_id": {"$in": stale}})
    store.histograms().delete_many({"board": board_slug})
    if histograms:
        store.histograms().bulk_write(
            [UpdateOne({"_id": _id}, {"$set": doc}, upsert=True) for _id, doc in histograms.items()]
        )
    store.tops_forget(board_slug)
    return report

"""An entry computed from a programmer's solves alone: what a rebuild writes for every
programmer (`rebuild`), and what a repair puts back for one (`services.programmer_refresh_boards`).

It must be exactly what the solve pipeline (`counting`) leaves behind, solve after solve, for
every day still kept; `tests/test_rebuild.py` checks it on random streams with late and repeated
solves. Pure: the solves are given (``points`` and ``solved_at`` of each).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from .. import days_kept, maths


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
    document = {"_id": who.programmer_id, "handle": who.handle, "groups": list(who.groups)}
    if window.streak:
        return document | _streak_fields(window, solves, today, time_zone)
    daily, latest = _daily(value_of, solves, time_zone)
    if window.is_all_time:
        key = maths.ALL_TIME_KEY
        total, reached = sum(daily.values()), max(latest.values())
        return {
            **document,
            "sums": {key: total},
            "last": {key: reached},
            "keys": {key: maths.sort_key(total, reached)},
        }
    return document | _window_fields(window, daily, latest, today)


def _daily(
    value_of: Callable[[int], int], solves: list[dict], time_zone: str
) -> tuple[dict[int, int], dict[int, dt.datetime]]:
    """({epoch day: count}, {epoch day: the latest solve time that day}) of some solves."""
    daily: dict[int, int] = defaultdict(int)
    latest: dict[int, dt.datetime] = {}
    for solve in solves:
        day = maths.epoch_day(solve["solved_at"], time_zone)
        daily[day] += value_of(solve["points"])
        latest[day] = max(latest.get(day, solve["solved_at"]), solve["solved_at"])
    return daily, latest


def _window_fields(
    window: maths.Window, daily: dict[int, int], latest: dict[int, dt.datetime], today: int
) -> dict:
    """The counts, sums and keys of a windowed board's entry, for the days still kept: each
    board day's window found once, its score and the time it was reached in one walk over the
    solve days (`maths.window_sums` and `maths.reached_at` at once: a million entries of three
    boards spend minutes here)."""
    oldest_kept = days_kept.history_from(today)
    board_days = sorted({d for day in daily for d in window.affected_days(day) if d >= oldest_kept})
    solve_days = sorted(daily)
    sums, keys = {}, {}
    for day in board_days:
        start = window.start(day)
        inside = [d for d in solve_days if start <= d <= day]
        sums[str(day)] = score = sum(daily[d] for d in inside)
        keys[str(day)] = maths.sort_key(score, max(latest[d] for d in inside))
    oldest_count = days_kept.counts_from(window, today)
    return {
        "days": {str(d): n for d, n in daily.items() if d >= oldest_count},
        "last": {str(d): t for d, t in latest.items() if d >= oldest_count},
        "sums": sums,
        "keys": keys,
    }


def _streak_fields(window: maths.Window, solves: list[dict], today: int, time_zone: str) -> dict:
    """A streak board's entry (see `maths.streak_scores`): the recent solve days' first times
    and the first days of their runs, and each kept day's current streak (all time: the
    longest)."""
    first: dict[int, dt.datetime] = {}
    for solve in solves:
        day = maths.epoch_day(solve["solved_at"], time_zone)
        first[day] = min(first.get(day, solve["solved_at"]), solve["solved_at"])
    oldest_run = days_kept.streaks_from(today)
    fields = {
        "first": {str(d): t for d, t in first.items() if d >= oldest_run},
        "began": {str(d): s for d, s in maths.streak_starts(first).items() if d >= oldest_run},
    }
    if window.is_all_time:
        key = maths.ALL_TIME_KEY
        length, reached = maths.longest_streak_score(first)
        return fields | {"sums": {key: length}, "keys": {key: maths.sort_key(length, reached)}}
    oldest_kept = days_kept.history_from(today)
    scores = {d: score for d, score in maths.streak_scores(first).items() if d >= oldest_kept}
    return fields | {
        "sums": {str(d): length for d, (length, _) in scores.items()},
        "keys": {str(d): maths.sort_key(*score) for d, score in scores.items()},
    }


def entry_from_reports(
    window: maths.Window, who: Identity, reports: list[maths.Report], today: int
) -> dict | None:
    """A best-score board's entry computed from a programmer's scored reports alone (see
    `counting._best_counting`): the best of each (problem, day) still kept (all time, of each
    problem), and the total and key of every kept day some report's window reaches, 0 when the
    bests inside it add up to 0 (off the board), as the updates leave them."""
    if not reports:
        return None
    document = {"_id": who.programmer_id, "handle": who.handle, "groups": list(who.groups)}
    bests: dict[tuple[str, int], tuple[int, dt.datetime]] = {}
    for report in reports:
        bucket = (report.problem, maths.best_bucket(window, report.day))
        if maths.best_better(report.value, report.at, bests.get(bucket)):
            bests[bucket] = (report.value, report.at)
    if window.is_all_time:
        board_days, oldest_best = [maths.ALL_TIME_KEY], 0
    else:
        oldest_kept = days_kept.history_from(today)
        reached = {d for r in reports for d in window.affected_days(r.day) if d >= oldest_kept}
        board_days, oldest_best = sorted(reached), days_kept.counts_from(window, today)
    sums, keys = {}, {}
    for name in board_days:
        day = 0 if name == maths.ALL_TIME_KEY else name
        total, at = maths.best_total(reports, window, day) or (0, None)
        sums[str(name)], keys[str(name)] = total, maths.best_key(total, at) if at else 0
    kept = [
        {"p": problem, "d": d, "v": value, "t": at}
        for (problem, d), (value, at) in bests.items()
        if window.is_all_time or d >= oldest_best
    ]
    return document | {"best": kept, "sums": sums, "keys": keys}

"""Every board of every day of the run, by brute force from the truth, beside what the site serves.

The brute force follows the definitions, not the engine's code: a window's sum of solves (or
points), a streak of consecutive solve days, competition ranking with shared ties. Every board is
read through the public API for every day the run touched and every group (everybody, each
country, each organization). On the all-time boards that count solves, a programmer below the
brute force lost solves, above it had some counted twice.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import requests

from .. import plan
from .truth import EPOCH, Truth, day_of

PAGE_SIZE = 100


def expected_scores(truth: Truth, board: dict, day: int, scope: tuple[str, str]) -> dict[str, int]:
    """{handle: score > 0} of a board day, straight from the definition."""
    if board["metric"] == "streak":
        return expected_streaks(truth, board, day, scope)
    first = -(10**9) if board["window"] == "all_time" else day - board["window_days"] + 1
    per_solve = 100 if board["metric"] == "points" else 1
    scores: Counter = Counter()
    for (handle, _), solved_on in truth.solve_day.items():
        if first <= solved_on <= day and _in_scope(truth.groups.get(handle, ("", "")), scope):
            scores[handle] += per_solve
    return dict(scores)


def expected_streaks(truth: Truth, board: dict, day: int, scope: tuple[str, str]) -> dict[str, int]:
    """{handle: streak > 0} of a streak board's day: on a rolling board the current streak (the
    consecutive solve days ending on the day, or on the day before when it has none), all time
    the longest run of consecutive solve days."""
    solve_days: defaultdict[str, set[int]] = defaultdict(set)
    for (handle, _), solved_on in truth.solve_day.items():
        if _in_scope(truth.groups.get(handle, ("", "")), scope):
            solve_days[handle].add(solved_on)
    scores = {}
    for handle, days in solve_days.items():
        if board["window"] == "all_time":
            score = max(_run_ending(days, last) for last in days)
        else:
            score = _run_ending(days, day) or _run_ending(days, day - 1)
        if score:
            scores[handle] = score
    return scores


def _run_ending(days: set[int], last: int) -> int:
    length = 0
    while last - length in days:
        length += 1
    return length


def _in_scope(groups: tuple[str, str], scope: tuple[str, str]) -> bool:
    kind, name = scope
    if kind == "everybody":
        return True
    return groups[0] == name if kind == "country" else groups[1] == name


def shared_ranks(scores: dict[str, int]) -> dict[str, int]:
    """Standard competition ranking: one plus the number of strictly better scores."""
    rank_of: dict[int, int] = {}
    for position, score in enumerate(sorted(scores.values(), reverse=True)):
        rank_of.setdefault(score, position + 1)
    return {handle: rank_of[score] for handle, score in scores.items()}


def site_board(
    session: requests.Session, base: str, slug: str, day: int | None, scope: tuple[str, str]
) -> list[dict]:
    params: dict = {"page_size": PAGE_SIZE}
    if day is not None:
        params["date"] = (EPOCH + dt.timedelta(days=day)).isoformat()
    if scope[0] == "country":
        params["country"] = scope[1]
    elif scope[0] == "org":
        params["org"] = scope[1]
    rows, page = [], 1
    while True:
        answer = session.get(
            f"{base}/api/v1/boards/{slug}", params={**params, "page": page}, timeout=60
        )
        answer.raise_for_status()
        entries = answer.json()["entries"]
        rows += entries
        if len(entries) < PAGE_SIZE:
            return rows
        page += 1


@dataclass
class BoardCheck:
    checked: int = 0
    differences: list[str] = field(default_factory=list)
    lost: int = 0
    counted_twice: int = 0


def check_boards(truth: Truth, world: plan.World, session: requests.Session) -> BoardCheck:
    check = BoardCheck()
    boards = session.get(f"{world.base_url}/api/v1/boards", timeout=30).json()["boards"]
    scopes = (
        [("everybody", "")]
        + [("country", c) for c in plan.COUNTRIES]
        + [("org", o) for o in plan.ORGANIZATIONS]
    )
    for board in boards:
        for day in board_days(world, board):
            for scope in scopes:
                expected = expected_scores(truth, board, day, scope)
                rows = site_board(
                    session,
                    world.base_url,
                    board["slug"],
                    None if board["window"] == "all_time" else day,
                    scope,
                )
                check.checked += 1
                check.differences += compare_board(board, day, scope, expected, rows)
                if board["window"] == "all_time" and scope[0] == "everybody":
                    if board["metric"] != "streak":  # a count of solves, unlike a streak
                        _count_lost_and_twice(check, board, expected, rows)
    return check


def board_days(world: plan.World, board: dict) -> list[int]:
    """Every day the run touched, and the day before it (the late solves' day)."""
    if board["window"] == "all_time":
        return [day_of(dt.datetime.now(dt.UTC))]
    first = day_of(world.time("run_start")) - 1
    return list(range(first, day_of(dt.datetime.now(dt.UTC)) + 1))


def compare_board(
    board: dict, day: int, scope: tuple, expected: dict, rows: list[dict]
) -> list[str]:
    where = f"{board['slug']} day {day} {scope[0]} {scope[1]}".rstrip()
    got = {row["handle"]: (row["rank"], row["score"]) for row in rows}
    ranks = shared_ranks(expected)
    want = {handle: (ranks[handle], score) for handle, score in expected.items()}
    differences = []
    if board.get("ties", "shared") == "shared" and got != want:
        wrong = sorted(set(got.items()) ^ set(want.items()))[:5]
        differences.append(
            f"{where}: {len(set(got.items()) ^ set(want.items()))} rows differ, e.g. {wrong}"
        )
    if [row["rank"] for row in rows] != sorted(row["rank"] for row in rows):
        differences.append(f"{where}: rows are not in rank order")
    if len(rows) != len(got):
        differences.append(f"{where}: a programmer is listed twice")
    return differences


def _count_lost_and_twice(check: BoardCheck, board: dict, expected: dict, rows: list) -> None:
    per_solve = 100 if board["metric"] == "points" else 1
    got = {row["handle"]: row["score"] for row in rows}
    for handle in set(got) | set(expected):
        difference = (got.get(handle, 0) - expected.get(handle, 0)) // per_solve
        check.lost += max(0, -difference)
        check.counted_twice += max(0, difference)

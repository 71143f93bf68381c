"""Ranklists of groups as the log alone says they are, and as the API lists them page by page:
the brute force every test of the groups' ranklists compares with."""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction
from zoneinfo import ZoneInfo

from django.test import Client
from django_countries.fields import Country

from solutions import leaderboard, mongo
from solutions.leaderboard import groups
from solutions.models import Board, Programmer


def weighted(scores: list[int]) -> Fraction:
    """The definition: Σ s_i · (1/5) · (4/5)^i, best first."""
    ordered = sorted(scores, reverse=True)
    return sum(
        (Fraction(s) * Fraction(1, 5) * Fraction(4, 5) ** i for i, s in enumerate(ordered)),
        Fraction(0),
    )


def window_first(board: Board, day: int) -> int:
    """The first day the board of `day` counts, straight from the board's definition."""
    date = leaderboard.day_to_date(day)
    if board.window == leaderboard.ROLLING:
        return day - board.window_days + 1
    if board.window == leaderboard.WEEK:
        return day - date.weekday()
    if board.window == leaderboard.MONTH:
        return day - date.day + 1
    return -(10**9)  # all time


def brute_scores(board: Board, day: int, time_zone: str) -> dict[int, int]:
    """{programmer id: score on the board of `day`} of the programmers on the boards, from the
    log alone."""
    visible = set(
        Programmer.objects.filter(hidden=False, banned=False).values_list("pk", flat=True)
    )
    first, scores = window_first(board, day), defaultdict(int)
    for solve in mongo.solves().find():
        local = solve["solved_at"].astimezone(ZoneInfo(time_zone)).date()
        solve_day = leaderboard.date_to_day(local)
        if solve["programmer_id"] in visible and first <= solve_day <= day:
            scores[solve["programmer_id"]] += board.value_of(solve["points"])
    return scores


def brute_ranklist(board: Board, day: int, kind: str, time_zone: str) -> list[dict]:
    """What the API should list for a kind of group on a board day: exact scores, shared ranks,
    equal scores in the ranklist's fixed order (by group id)."""
    people = {p.pk: p for p in Programmer.objects.all()}
    members: dict[str, list[int]] = defaultdict(list)
    for pid, score in brute_scores(board, day, time_zone).items():
        for scope in people[pid].group_scopes():
            if score > 0 and scope.startswith(f"{kind}:"):
                members[scope].append(score)
    exact = {scope: weighted(scores) for scope, scores in members.items()}
    ordered = sorted(exact, key=lambda scope: (-exact[scope], groups.group_id(scope)))
    rows = []
    for scope in ordered:
        value = scope.split(":", 1)[1]
        rows.append(
            {
                "rank": 1 + sum(other > exact[scope] for other in exact.values()),
                "group": value,
                "name": Country(code=value).name if kind == "country" else value,
                "score": math.floor(exact[scope] * 10 + Fraction(1, 2)) / 10,
                "members": len(members[scope]),
            }
        )
    return rows


def listed(client: Client, board: Board, day: int, kind: str, page_size: int = 2) -> list[dict]:
    """Every entry of a ranklist through the API, a few at a time (so ties run across pages)."""
    date, entries, page = leaderboard.day_to_date(day), [], 1
    while True:
        query = f"kind={kind}&page={page}&page_size={page_size}"
        if not board.spec.is_all_time:
            query += f"&date={date}"
        answer = client.get(f"/api/v1/boards/{board.slug}/groups?{query}")
        assert answer.status_code == 200, answer.json()
        body = answer.json()
        if not body["entries"]:
            assert body["total"] == len(entries) and body["pages"] == max(1, page - 1)
            return entries
        entries += body["entries"]
        page += 1

"""The engine as its tests drive and check it: the article's test vector, solves on a given
moment, and the checks that every order holds the entries and every board shows what it should."""

from __future__ import annotations

import datetime as dt
from collections import Counter

from django.db import connection

from solutions import leaderboard, selectors, services
from solutions.leaderboard import encoding, entries, journals, reading
from solutions.models import Board, Problem

# The article's test vector: today is epoch day 18281 (2020-01-20).
VECTOR_TODAY = 18281
VECTOR_DAILY = [5, 3, 3, 0, 1, 2, 4]  # newest first
VECTOR_SCORES = [18, 14, 12, 11, 11, 8, 5]  # today, then the coming six days


def at_noon(day: int) -> dt.datetime:
    return dt.datetime.combine(leaderboard.day_to_date(day), dt.time(12), tzinfo=dt.UTC)


def many_problems(count: int) -> list[Problem]:
    return [Problem.objects.create(slug=f"q{i}", title=f"Q{i}", answer="42") for i in range(count)]


def solve_on(programmer, problem, moment):
    return services.solve_record(programmer=programmer, problem=problem, solved_at=moment)


def orders_hold_the_entries(board: Board, days: range) -> None:
    """Every order of these days up to the board's frontier lists exactly the entries' members,
    in order, with the histogram of their scores; and every entry says the orders hold its
    current keys."""
    found = list(entries.entries(board.slug).find())
    for entry in found:
        assert entries.placed_of(entry) == entries.placement(entry), entry["handle"]
    frontier = journals.journal_heads([board.slug])[board.slug].frontier
    for day in (d for d in days if board.spec.is_all_time or d <= frontier):
        key = entries.board_key(board.spec, day)
        for scope in ["", "country:BD", "country:IN"]:
            expected = sorted(
                encoding.Member(e["keys"][key], e["handle"], e["_id"]).record()
                for e in found
                if e.get("keys", {}).get(key, 0) > 0 and (not scope or scope in e["groups"])
            )
            histogram, members = reading.order_page(board.slug, key, scope, 0, 10_000)
            assert [m.record() for m in members] == expected, (board.slug, day, scope)
            assert histogram == Counter(encoding.record_score(r) for r in expected)


def every_board_shows(boards, rows: list[tuple[str, int]]) -> None:
    """Page 1 of every board lists exactly these (handle, score), sorted by handle."""
    for board in boards.values():
        page = selectors.board_page(board=board)
        assert sorted((row.handle, row.score) for row in page.rows) == rows, board.slug


def closing_sql(work):
    """`work` made fit for a thread of its own: the thread's own SQL connection is closed when
    it ends."""

    def run(*args):
        try:
            work(*args)
        finally:
            connection.close()

    return run

"""Rank history: every programmer's rank on each board day, recorded by beat every few
minutes, keyed by (board, programmer, day) so a second run rewrites the same documents."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.conf import settings
from pymongo import UpdateOne

from solutions import leaderboard, live
from solutions import selectors as board_selectors
from solutions.clock import today
from solutions.models import Board

from .. import mongo, selectors
from .locks import job_lock

WRITE_BATCH = 1000


@dataclass
class HistoryReport:
    board: str
    skipped: bool = False
    days: list[int] = field(default_factory=list)
    documents: int = 0


def history_record(*, board: Board, day: int) -> int:
    """Record every programmer's rank on the board of `day`: one pass over the board in order
    (ranks by position, shared ones by score), written in batches. Returns how many."""
    key = board_selectors.day_key(board, day)
    total = leaderboard.board_total(leaderboard.histogram(board.slug, key))
    expires = dt.datetime.combine(
        leaderboard.day_to_date(day + settings.ACTIVITY_HISTORY_DAYS), dt.time(), tzinfo=dt.UTC
    )
    operations, position, rank, previous_score = [], 0, 0, None
    for member in leaderboard.walk(board.slug, key):
        score = member.score
        position += 1
        if board.ties == Board.UNIQUE or score != previous_score:
            rank = position
        previous_score = score
        operations.append(
            UpdateOne(
                {"_id": selectors.history_id(board.slug, member.programmer_id, day)},
                {
                    "$set": {
                        "board": board.slug,
                        "programmer_id": member.programmer_id,
                        "day": day,
                        "rank": rank,
                        "score": score,
                        "total": total,
                        "expires_at": expires,
                    }
                },
                upsert=True,
            )
        )
        if len(operations) >= WRITE_BATCH:
            mongo.rank_history().bulk_write(operations, ordered=False)
            operations = []
    if operations:
        mongo.rank_history().bulk_write(operations, ordered=False)
    return position


def history_snapshot(*, board: Board) -> HistoryReport:
    """Bring a board's rank history up to date (beat runs it every few minutes).

    Records today's ranks when the board changed since the last run or the day is new, and the
    final ranks of the days that ended since then: rolling and calendar boards read those from
    the engine (a past day's sums are its final board), up to `CHART_DAYS` back, so the first
    run fills the charts at once. All-time boards have no per-day sums: their day is the last
    snapshot taken that day."""
    report = HistoryReport(board=board.slug)
    with job_lock(f"history:{board.slug}") as acquired:
        if not acquired:
            report.skipped = True
            return report
        state_id = f"history:{board.slug}"
        state = mongo.state().find_one({"_id": state_id}) or {}
        now_day = today()
        version = live.board_version(board.slug)  # read first: a solve meanwhile re-triggers
        if not board.spec.is_all_time:
            first = max(
                state.get("final_day", now_day - selectors.CHART_DAYS) + 1,
                leaderboard.history_from(now_day),
            )
            report.days += list(range(first, now_day))
        if state.get("version") != version or state.get("day") != now_day:
            report.days.append(now_day)
        for day in report.days:
            report.documents += history_record(board=board, day=day)
        mongo.state().update_one(
            {"_id": state_id},
            {"$set": {"final_day": now_day - 1, "version": version, "day": now_day}},
            upsert=True,
        )
    return report

"""Rank history: every programmer's rank on each board day, recorded by beat every few
minutes, keyed by (board, programmer, day) so a second run rewrites the same documents.

A snapshot's work grows with the board and the days it records (the first one fills a month of
charts), so the task records at most STEP_DOCUMENTS ranks and queues the rest behind whatever
else is queued: otherwise a large board held the worker's threads for minutes while the tasks
beat queues every minute waited behind it (a competition's end, whose release of the solves its
freeze held, waited eight minutes on the contest-day run). What is left is kept in the board's
state document between steps (`_Progress`)."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field

from django.conf import settings
from pymongo import UpdateOne

from solutions import leaderboard, live
from solutions import selectors as board_selectors
from solutions.clock import today
from solutions.models import Board

from .. import mongo, selectors
from .locks import job_lock

WRITE_BATCH = 1000  # ranks a page reads and a bulk write writes
STEP_DOCUMENTS = 5000  # ranks a snapshot task records before it queues the rest


@dataclass
class HistoryReport:
    board: str
    skipped: bool = False
    days: list[int] = field(default_factory=list)
    documents: int = 0
    more: bool = False  # stopped with ranks left to record: the next call carries on


@dataclass
class _Progress:
    """A snapshot under way: the days left to record (the first one begun), how many of the
    first day's members are recorded, the rank and score of the last of them (shared ranks go
    on across pages), the day's total as its first page read it, and the board's version and
    today when the snapshot began."""

    days: list[int]
    version: int
    day: int
    offset: int = 0
    rank: int = 0
    score: int | None = None
    total: int | None = None


def history_record(*, board: Board, day: int) -> int:
    """Record every programmer's rank on the board of `day`, whole. Returns how many."""
    progress = _Progress(days=[day], version=0, day=day)
    recorded = 0
    while progress.days:
        recorded += _page_record(board, progress, WRITE_BATCH)
    return recorded


def history_snapshot(
    *, board: Board, budget: int | None = None, carry_on: bool = False
) -> HistoryReport:
    """Bring a board's rank history up to date (beat runs it every few minutes), recording at
    most `budget` ranks (None: all of them); the report says whether more are left (`more`),
    which the next call carries on. With `carry_on` it only carries on a snapshot under way and
    never begins one: a step queued behind a finished snapshot (two chains of steps) ends there,
    instead of snapshotting a board that changes every second again and again.

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
        if state.get("progress"):
            progress = _Progress(**state["progress"])
        elif carry_on:
            return report
        else:
            progress = _begun(board, state)
        while progress.days and (budget is None or report.documents < budget):
            if progress.days[0] not in report.days:
                report.days.append(progress.days[0])
            limit = WRITE_BATCH if budget is None else min(WRITE_BATCH, budget - report.documents)
            report.documents += _page_record(board, progress, limit)
        report.more = bool(progress.days)
        if report.more:
            changes = {"$set": {"progress": asdict(progress)}}
        else:
            done = {"final_day": progress.day - 1, "version": progress.version, "day": progress.day}
            changes = {"$set": done, "$unset": {"progress": ""}}
        mongo.state().update_one({"_id": state_id}, changes, upsert=True)
    return report


def _begun(board: Board, state: dict) -> _Progress:
    """A new snapshot: the days to record (none when nothing changed)."""
    now_day = today()
    version = live.board_version(board.slug)  # read first: a solve meanwhile re-triggers
    days = []
    if not board.spec.is_all_time:
        first = max(
            state.get("final_day", now_day - selectors.CHART_DAYS) + 1,
            leaderboard.history_from(now_day),
        )
        days += list(range(first, now_day))
    if state.get("version") != version or state.get("day") != now_day:
        days.append(now_day)
    return _Progress(days=days, version=version, day=now_day)


def _page_record(board: Board, progress: _Progress, limit: int) -> int:
    """Record the ranks of up to `limit` members of the first day left, from where `progress`
    stands (ranks by position, shared ones by score), and move it on: to the next day once the
    day's members run out. Returns how many were recorded."""
    day = progress.days[0]
    key = board_selectors.day_key(board, day)
    if progress.total is None:  # at the day's first page: all its ranks are out of one total
        progress.total = leaderboard.board_total(leaderboard.histogram(board.slug, key))
    members = leaderboard.page(board.slug, key, "", progress.offset, limit).members
    expires = dt.datetime.combine(
        leaderboard.day_to_date(day + settings.ACTIVITY_HISTORY_DAYS), dt.time(), tzinfo=dt.UTC
    )
    operations = []
    for member in members:
        progress.offset += 1
        if board.ties == Board.UNIQUE or member.score != progress.score:
            progress.rank = progress.offset
        progress.score = member.score
        fields = {"board": board.slug, "programmer_id": member.programmer_id, "day": day}
        fields |= {"rank": progress.rank, "score": member.score, "total": progress.total}
        _id = selectors.history_id(board.slug, member.programmer_id, day)
        operations.append(
            UpdateOne({"_id": _id}, {"$set": fields | {"expires_at": expires}}, upsert=True)
        )
    if operations:
        mongo.rank_history().bulk_write(operations, ordered=False)
    if len(members) < limit:
        progress.days.pop(0)
        progress.offset, progress.rank, progress.score, progress.total = 0, 0, None, None
    return len(members)

"""Beat's upkeep of the boards: the orders of days past the history kept (`orders_prune`), the
solves and reports a crash left logged but unapplied (`solves_repair`), the held solves whose
hold is over (`solves_release`), and tomorrow's orders, made in the last hour of today
(`days_prepare`).

Each recomputes what it finishes from the logs (`programmer_refresh_boards`), so running it again,
or at the same time as a request or another run, counts nothing twice.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from django.utils import timezone
from pymongo.collection import Collection

from .. import holds, leaderboard, mongo, solvers
from ..clock import today
from ..models import Board, Programmer
from .applied import orders_moved
from .programmers import programmer_refresh_boards
from .rebuilds import board_windows


def orders_prune() -> int:
    """Drop every board's orders of days past the history kept (beat runs it every hour: it
    finds nothing to do but once a day, after midnight)."""
    now_day = today()
    return sum(
        leaderboard.orders_prune(board.slug, board.spec, now_day) for board in Board.objects.all()
    )


def solves_repair(*, older_than: dt.timedelta = dt.timedelta(minutes=2)) -> int:
    """Count solves that were logged but never applied (a crash between the log and the boards),
    and finish the order moves a crash left pending on any board.

    Their programmers' entries are recomputed from the log, which is idempotent, so a solve is
    never counted twice however often this runs. Returns how many programmers were repaired.
    """
    pending = {"applied": False, "logged_at": {"$lt": timezone.now() - older_than}}
    programmer_ids = set(mongo.solves().distinct("programmer_id", pending))
    programmer_ids |= set(mongo.scores().distinct("programmer_id", pending))
    for programmer in Programmer.objects.filter(pk__in=programmer_ids):
        programmer_refresh_boards(programmer=programmer)
        mine = {**pending, "programmer_id": programmer.pk}
        for log in (mongo.solves(), mongo.scores()):
            log.update_many(mine, {"$set": {"applied": True}})
    # Whatever a crash left pending, on every board, and the days every board keeps.
    leaderboard.pending_place(boards=board_windows(Board.objects.all()), finish=orders_moved)
    solvers.moves_repair(older_than=older_than)  # and in the problems' solver counts
    solves_release()  # and the held solves whose hold is over, if nothing released them yet
    return len(programmer_ids)


def days_prepare() -> int:
    """Make tomorrow's orders in the last hour of today, while the solves go on (beat runs it
    every ten seconds; `leaderboard.day_change`): a batch begins the day on every board, the passes
    move the programmers the day changes, off the applier's lease, and a batch finishes them.
    Returns how many boards' passes this run did (0 the rest of the day, or while another run's
    passes are under way)."""
    boards = board_windows(Board.objects.all())
    leaderboard.pending_place(boards=boards, finish=orders_moved)
    passed = leaderboard.days_pass(boards)
    if passed:
        leaderboard.pending_place(boards=boards, finish=orders_moved)
    return len(passed)


def solves_release() -> int:
    """Count the held solves that no window holds any more (see `holds`): the competition ended,
    early or not. Returns how many were released.

    Each programmer's released solves leave the hold (unapplied, so the repair task finishes
    them after a crash), then their entries are recomputed from the log with them (counted on
    their own days, however late) and they join their problems' counts: exactly once, whoever
    else releases them at the same time. A solve still held whose window's end moved (staff
    moved the competition's end) keeps the new end."""
    count = 0
    for log in (mongo.solves(), mongo.scores()):  # the best-score boards' reports are held too
        released = _held_over(log)
        for programmer in Programmer.objects.filter(pk__in=released):
            ids = {"_id": {"$in": released[programmer.pk]}}
            unheld = {"$unset": {holds.HELD_UNTIL: ""}, "$set": {"applied": False}}
            freed = log.update_many({**ids, **holds.HELD}, unheld)
            if freed.modified_count:
                programmer_refresh_boards(programmer=programmer)
                log.update_many({**ids, "applied": False}, {"$set": {"applied": True}})
                count += freed.modified_count
    return count


def _held_over(log: Collection) -> dict[int, list]:
    """{programmer id: ids of their held solves or reports in `log` that no window holds any
    more}; one still held whose window's end moved keeps the new end."""
    fields = {"programmer_id": 1, "problem": 1, "solved_at": 1, holds.HELD_UNTIL: 1}
    held = list(log.find(holds.HELD, fields))
    until = holds.still_held(held) if held else {}
    released: dict[int, list] = defaultdict(list)
    for solve in held:
        end = until.get(solve["_id"])
        if end is None:
            released[solve["programmer_id"]].append(solve["_id"])
        elif end != solve[holds.HELD_UNTIL]:
            moved = {"_id": solve["_id"], **holds.HELD}
            log.update_one(moved, {"$set": {holds.HELD_UNTIL: end}})
    return released

"""The moves a new day brings, written straight into its orders (`day_change`): whom the day
changes (found in the logs by the day they solved), whom the batches moved while it was prepared
(``prep_moved``, recorded by each batch), each taken from one placement of their entry to
another, and how those moves are written: an order a step, its sets read and written once, the
groups' ranklists before the members' orders, every root moved marked with the step's epoch.
Nobody reads the day's orders before it is finished and no batch writes them, so nothing goes
through the journal.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping

from django.utils import timezone
from pymongo import InsertOne
from pymongo.collection import Collection

from .. import mongo
from . import (
    days_kept,
    entries,
    folds,
    groups,
    journals,
    lease,
    maths,
    moving,
    order_writes,
    orders,
    reading,
)

MOVES_A_STEP = 50_000  # moves a step of the pass writes at most (orders are never split)


def prep_moved() -> Collection:
    """``prep_moved``: one document for each batch and board whose preparation was under way:
    the programmers it moved (``pids``), under the preparation's id (``prep``)."""
    return mongo.get_db()["prep_moved"]


def placed_moved_writes(preps: Mapping[str, dict], moved: Mapping[str, Iterable[int]]) -> list:
    """The writes that record which programmers a batch moves on boards whose next day's
    preparation is under way ({board: the preparation}), under its id, for the next round of its
    pass and for its finish (`day_change`); sent before the writes of what the orders hold for
    them (`entries.placed_writes`)."""
    where = mongo.namespace(prep_moved())
    return [
        InsertOne(
            {"prep": prep["id"], "pids": sorted(moved[board]), "at": timezone.now()},
            namespace=where,
        )
        for board, prep in sorted(preps.items())
        if moved.get(board)
    ]


def moved_during(prep_id: str) -> list[int]:
    """The programmers batches moved during a preparation (by its index on ``prep``)."""
    return sorted({pid for found in prep_moved().find({"prep": prep_id}) for pid in found["pids"]})


def programmers_due(window: maths.Window, day: int) -> list[int]:
    """The ids of the programmers whose score the day may change (`Window.days_moving`), in
    order: one read of the log's solves of each such day, by its index on `solved_at` (a
    best-score board's: of its `scores` log, by the same index there)."""
    found: set[int] = set()
    log = mongo.scores() if window.best else mongo.solves()
    for solve_day in window.days_moving(day):
        during = {"$gte": days_kept.day_start(solve_day), "$lt": days_kept.day_start(solve_day + 1)}
        for solve in log.find({"solved_at": during}, {"programmer_id": 1}):
            found.add(solve["programmer_id"])
    return sorted(found)


def due_moves(board_slug: str, window: maths.Window, prep: dict) -> dict[str, list[moving.Move]]:
    """{scope: moves} that make the orders of the preparation's day hold the programmers whose
    place the day changes (`programmers_due`) as placed when it began
    (`entries.placed_before_prep`): from the day before's record, or from nothing on a calendar
    period's first day, which starts empty."""
    day, copied = prep["day"], not window.starts_period(prep["day"])
    by_scope: dict[str, list[moving.Move]] = defaultdict(list)
    for entry in entries.entries_placed(board_slug, programmers_due(window, day)):
        placed = entries.placed_before_prep(entry, prep["id"])
        moves = entries.day_moves(placed, entry["_id"], day, copied)
        for (_day_key, scope), move in moves.items():
            by_scope[scope].append(move)
    return by_scope


def moves_between(
    board_slug: str,
    day: int,
    programmer_ids: list[int],
    was: Callable[[dict], dict | None],
    now: Callable[[dict], dict | None],
) -> dict[str, list[moving.Move]]:
    """{scope: moves} that take these programmers in day `day`'s orders from one placement of
    their entry (`was`) to another (`now`)."""
    by_scope: dict[str, list[moving.Move]] = defaultdict(list)
    for entry in entries.entries_placed(board_slug, programmer_ids):
        behind = entries.Behind(entry["_id"], was(entry), now(entry) or {})
        for (_day_key, scope), move in behind.moves(day, day).items():
            by_scope[scope].append(move)
    return by_scope


def moves_write(
    board_slug: str, day: int, epoch: int, by_scope: Mapping[str, list[moving.Move]]
) -> None:
    """Write these moves into day `day`'s orders, marking the roots they move with `epoch`: the
    groups' ranklists first, then the members' orders (see `_ranklist_moves`)."""
    _steps_write(board_slug, day, epoch, _ranklist_moves(board_slug, day, epoch, by_scope))
    _steps_write(board_slug, day, epoch, by_scope)


def _ranklist_moves(
    board_slug: str, day: int, epoch: int, by_scope: Mapping[str, list[moving.Move]]
) -> dict[str, list[moving.Move]]:
    """{ranklist scope: moves} of the groups whose records the members' moves change: from each
    group's order of `day` before its moves, and after them (laid over it in memory). Taken
    before the members' orders move, so a preparation stopped between the two takes the same
    moves again (a group whose order holds the epoch already was moved in its ranklist before)."""
    grouped = {orders.order_id(board_slug, str(day), s): s for s in by_scope if groups.kind_of(s)}
    roots = journals.journals_read({}, grouped)[1]  # their histograms and epochs
    moves: dict[str, list[moving.Move]] = defaultdict(list)
    for order, scope in grouped.items():
        root = roots[order]
        if root.folded >= epoch:
            continue
        pairs = [(move.old, move.new) for move in by_scope[scope]]
        if root.shift:  # a histogram of buckets: the records from the order itself
            old = reading.group_record(board_slug, str(day), scope, laid=(epoch, []))
            new = reading.group_record(board_slug, str(day), scope, laid=(epoch, pairs))
        else:
            old = groups.record(scope, root.histogram)
            laid = folds.histogram_laid(root, epoch, journals.pairs_histogram(pairs))
            new = groups.record(scope, laid)
        if old != new:
            kind = groups.kind_of(scope) or ""
            moves[groups.ranklist_scope(kind)].append(moving.Move(old, new))
    return moves


def _steps_write(
    board_slug: str, day: int, epoch: int, by_scope: Mapping[str, list[moving.Move]]
) -> None:
    """Move day `day`'s orders of these scopes, each in one step of the pass (its sets read and
    written once), orders together up to MOVES_A_STEP moves a step, the lease renewed between
    steps; a root that holds `epoch` already (moved by a preparation stopped later) is left.
    The documents born on `day` are its orders' own (`journals.frontier_exclusive`)."""
    frontier = {board_slug: day}
    step: dict[str, tuple[int, list[moving.Move]]] = {}
    taken = 0
    for scope, moves in sorted(by_scope.items(), key=lambda item: -len(item[1])):
        if step and taken + len(moves) > MOVES_A_STEP:
            lease.keep()
            order_writes.manifests_move(step, frontier)
            step, taken = {}, 0
        step[orders.order_id(board_slug, str(day), scope)] = (epoch, moves)
        taken += len(moves)
    if step:
        lease.keep()
        order_writes.manifests_move(step, frontier)

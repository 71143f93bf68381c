"""A new day's orders, made from the day before by the moves the day brings, while solves go on.

The entries forward-date every sum and key (see `maths`), but the orders are kept only up to each
board's **frontier**: today, then tomorrow from the last hour of today on
(`days_kept.frontier_wanted`). A solve moves its programmer in the orders of the days up to the
frontier alone, a day or two, however far ahead its sums reach. Moving the frontier a day on
(**preparing** day d) makes day d's orders from day d-1's, before anybody reads them, in three
parts, so that only two short ones hold the applier's lease:

1. **Begin** (`day_begin`, the lease holder): the board's journal is folded, so that each of
   d-1's orders is its root alone, and the journal records the preparation (``prep``: the day,
   its id, and the epoch its pass marks roots with) and moves its epoch on. From then on the
   batches go on moving d-1's orders, never changing in place a document d's copies can list
   (`journals.frontier_exclusive`), and each batch records whom it moves
   (`placed_moved_writes`) and, the first time, what the orders held for them before
   (``prep_from``, `entries.placed_writes`).
2. **Pass** (`day_pass`, off the lease: the prepare task as the board's preparer,
   `lease.preparer_take`): d's roots are made as copies of d-1's as they were when it began
   (`day_copies`; a calendar period's first day starts empty); then the programmers whose place
   the day changes are moved in d's orders,
   **in one pass an order**: on a rolling window, those who solved on the day that leaves it,
   and on d itself (a judge's clock may run ahead), found in the `solves` log by its index on
   `solved_at`; no scan of a board and no job at midnight. Each moves from what the orders held
   for them when the preparation began to what that placement says for d
   (`entries.placed_before_prep`, `entries.day_moves`): the same moves whenever the pass runs,
   whatever the batches do meanwhile. Nobody reads d's orders yet and no batch writes them, so
   the moves go straight into them, each order's sets read and written once
   (`order_writes.manifests_move`), not through the journal. The groups' ranklists move first,
   from each group's histogram before and after its members' moves, then the members' orders.
   Every root moved is marked with the pass's epoch, so a pass stopped anywhere is carried on by
   the next, which skips the orders marked; a preparer that outlived its lease meets versions
   gone. The journal records the pass done.
3. **Finish** (`day_finish`, the lease holder): those the batches moved since the beginning move
   in d's orders from what the pass placed them as to what the orders of d-1 hold for them now
   (bounded by the solves of the preparation's minutes, not by the board), their groups in the
   ranklists; then the frontier moves to d, and the journal's epoch on, in one write.

The prepare task (beat, every ten seconds) begins, passes and finishes each board's tomorrow in the
last hour of today, with solves going on throughout; a batch begins it and finishes it too.
A day that has come before it was made (no task ran) is made whole by its first lease holder:
the first solve after midnight, the repair task, or the first read, which waits for it
(`reading`, `applier.day_wait`; a read of tomorrow in the last hour does the pass itself).
"""

from __future__ import annotations

import functools
import secrets
from collections import defaultdict
from collections.abc import Iterable, Mapping

from django.utils import timezone
from pymongo import InsertOne
from pymongo.collection import Collection

from .. import mongo
from . import (
    day_copies,
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
PREP_MARK_TRIES = 5  # the lease holder writes the journal a few times a second at most


def frontiers_catch_up(boards: Mapping[str, maths.Window | None]) -> dict[str, journals.Head]:
    """As the lease holder: bring each of these boards' frontier to the day wanted now, a day at a
    time. A board's window is the one given, else the one its journal keeps (each given is kept
    there, for the readers and the repair task that know only the board). A board never written
    yet starts at the day wanted: nothing is placed on it. All-time boards have no days and no
    frontier. Tomorrow, wanted in the last hour of today, is begun here and finished once its
    pass is done (`days_pass`, off the lease); a day that has come is prepared whole, waiting for
    nothing. Returns the boards' journal heads as they are then, which a batch reads before
    the entries (`applier`): read once when nothing changes, as in most batches."""
    wanted, today = days_kept.frontier_wanted(), days_kept.current_day()
    heads = journals.journal_heads(boards)
    changed = False
    for board_slug, given in sorted(boards.items()):
        head = heads[board_slug]
        window = given or _window_of(head.window)
        if window is None or window.is_all_time:
            continue
        frontier = head.frontier
        if frontier is None or head.window != _window_kept(window):
            frontier = wanted if frontier is None else frontier
            changes = {"frontier": frontier, "window": _window_kept(window)}
            journals.journal_write(board_slug, journals.journal_read(board_slug), changes)
            changed = True
        while frontier < wanted:
            frontier += 1
            if frontier <= today:
                day_prepare(board_slug, window, frontier)
            elif not begun(head.prep, frontier):
                day_begin(board_slug, window, frontier)
            elif head.prep.get("passed"):
                day_finish(board_slug, frontier)
            else:
                break  # its pass is under way
            changed = True
    return journals.journal_heads(boards) if changed else heads


def begun(prep: dict | None, day: int) -> bool:
    """Whether a journal's preparation (`Head.prep`) is day `day`'s, begun by `day_begin`."""
    return bool(prep) and prep.get("day") == day and "id" in prep


def frontier_start(board_slug: str, window: maths.Window, frontier: int) -> None:
    """A board's journal anew, its orders made up to `frontier` in bulk (a rebuild): no
    preparation under way."""
    journals.journal_write(
        board_slug,
        journals.journal_read(board_slug),
        {"frontier": frontier, "window": _window_kept(window), "prep": None},
    )


def _window_kept(window: maths.Window) -> dict:
    kept = {"kind": window.kind, "days": window.days, "streak": window.streak}
    return kept | ({"best": True} if window.best else {})


def _window_of(kept: dict | None) -> maths.Window | None:
    return None if kept is None else maths.Window(**kept)


def day_prepare(board_slug: str, window: maths.Window, day: int) -> None:
    """Make a board's orders of `day` from those of the day before at once, as the lease holder:
    begun if it was not, its pass done if it was not, finished (see the module docstring)."""
    prep = day_begin(board_slug, window, day)
    if not prep.get("passed"):
        day_pass(board_slug, window, prep)
    day_finish(board_slug, day)


def day_begin(board_slug: str, window: maths.Window, day: int) -> dict:
    """As the lease holder: begin day `day`'s preparation, unless it is begun (steps 1 and 2 of
    the module docstring); returns it as the journal keeps it (``prep``: the day, the epoch its
    pass marks the roots it moved with, its id)."""
    journal = journals.journal_read(board_slug)
    prep = journal.get("prep") or {}
    if begun(prep, day):
        return prep
    if any(journal.get("p", {}).values()) or journals.fold_first(journal):
        journal = folds.journals_fold({board_slug: journal})[board_slug]
    epoch = journal.get("epoch", 0)
    # The journal's own epoch moves on: its parts written from now on never share the pass's.
    # A calendar period's first day starts empty: nothing to copy.
    copied = window.starts_period(day)
    prep = {"day": day, "epoch": epoch, "id": secrets.token_hex(8), "copied": copied}
    journals.journal_write(board_slug, journal, {"prep": prep, "epoch": epoch + 1})
    return prep


def day_pass(board_slug: str, window: maths.Window, prep: dict) -> None:
    """Move the programmers the day changes in its orders (step 3), as the board's preparer
    (`lease.preparer_take`) or the lease holder, then mark the pass done in the journal. Each
    moves from what the orders held for them when the preparation began to what that placement
    says for the day, so the moves are the same whenever the pass runs, whatever the batches
    meanwhile; a root that holds the pass's epoch was moved by a pass stopped later."""
    day, epoch = prep["day"], prep["epoch"]
    if not prep.get("copied"):
        day_copies.orders_copy(board_slug, day)
        _prep_mark(board_slug, prep, copied=True)
    due = _programmers_due(window, day)
    by_scope = _moves_of(board_slug, due, prep, copied=not window.starts_period(day))
    ranklists = _ranklist_moves(board_slug, day, epoch, by_scope)
    _pass(board_slug, day, epoch, ranklists)
    _pass(board_slug, day, epoch, by_scope)
    _prep_mark(board_slug, prep, passed=True)


def _prep_mark(board_slug: str, prep: dict, **marks: bool) -> None:
    """Mark a preparation's step done in the journal (``copied``, ``passed``), over the version
    read (the lease holder may write it meanwhile: read again and tried again). A preparation
    that is not the journal's any more (another preparer's pass was finished, or a rebuild
    started the board afresh) stops its preparer (`orders.OrdersConflict`)."""
    for attempt in range(PREP_MARK_TRIES):
        journal = journals.journal_read(board_slug)
        now = journal.get("prep") or {}
        if now.get("id") != prep["id"]:
            raise orders.OrdersConflict("the preparation was finished or dropped meanwhile")
        try:
            journals.journal_write(board_slug, journal, {"prep": {**now, **marks}})
            return
        except orders.OrdersConflict:
            if attempt == PREP_MARK_TRIES - 1:
                raise


def day_finish(board_slug: str, day: int) -> None:
    """As the lease holder: once its pass is done, move in day `day`'s orders those that batches
    moved meanwhile (`placed_moved_writes`), from what the pass placed them as to what the
    orders of the day before hold for them now, then move the frontier to `day` (step 4)."""
    journal = journals.journal_read(board_slug)
    prep, epoch = journal.get("prep") or {}, journal.get("epoch", 0)
    if not begun(prep, day) or not prep.get("passed"):
        # Dropped meanwhile (a rebuild started the board afresh): the batch starts again.
        raise orders.OrdersConflict(f"the preparation of {board_slug}'s day {day} is gone")
    by_scope: dict[str, list[moving.Move]] = defaultdict(list)
    for entry in entries.entries_placed(board_slug, _moved_during(prep["id"])):
        before = entries.placed_before_prep(entry, prep["id"])
        behind = entries.Behind(entry["_id"], before, entries.placed_of(entry) or {})
        for (_day_key, scope), move in behind.moves(day, day).items():
            by_scope[scope].append(move)
    ranklists = _ranklist_moves(board_slug, day, epoch, by_scope)
    _pass(board_slug, day, epoch, ranklists)
    _pass(board_slug, day, epoch, by_scope)
    changes = {"frontier": day, "prep": None, "epoch": epoch + 1}
    journals.journal_write(board_slug, journal, changes)


def days_pass(boards: Mapping[str, maths.Window | None]) -> list[str]:
    """Do the pass of every preparation begun and not passed on these boards (`day_pass`), each
    as its board's preparer, off the applier's lease: the solves go on meanwhile. Returns the
    boards whose pass this did, which the next lease holder finishes (`frontiers_catch_up`)."""
    done = []
    heads = journals.journal_heads(boards)  # one read: most of the day, nothing to pass
    for board_slug in sorted(b for b, head in heads.items() if _pass_due(head.prep)):
        token = secrets.token_hex(8)
        if not lease.preparer_take(board_slug, token):
            continue  # another preparer's
        try:
            head = journals.journal_heads([board_slug])[board_slug]  # as it is, now this holds it
            window = boards[board_slug] or _window_of(head.window)
            if window is None or not _pass_due(head.prep):
                continue
            day_pass(board_slug, window, head.prep)
        except orders.OrdersConflict:
            continue  # this preparer's lease ran out and another's pass wrote first
        finally:
            mongo.cleanup(functools.partial(lease.preparer_release, board_slug, token))
        done.append(board_slug)
    return done


def _pass_due(prep: dict | None) -> bool:
    """Whether a journal's preparation (`Head.prep`) is begun and its pass not done."""
    return bool(prep) and begun(prep, prep.get("day")) and not prep.get("passed")


# --- the programmers batches moved during a preparation -----------------------------------------


def prep_moved() -> Collection:
    """``prep_moved``: one document for each batch and board whose preparation was under way:
    the programmers it moved (``pids``), under the preparation's id (``prep``)."""
    return mongo.get_db()["prep_moved"]


def placed_moved_writes(preps: Mapping[str, str], moved: Mapping[str, Iterable[int]]) -> list:
    """The writes that record which programmers a batch moves on boards whose next day's
    preparation is under way ({board: its id}), for `day_finish`; sent before the writes of
    what the orders hold for them (`entries.placed_writes`)."""
    where = mongo.namespace(prep_moved())
    return [
        InsertOne(
            {"prep": prep_id, "pids": sorted(moved[board]), "at": timezone.now()},
            namespace=where,
        )
        for board, prep_id in sorted(preps.items())
        if moved.get(board)
    ]


def _moved_during(prep_id: str) -> list[int]:
    """The programmers batches moved during a preparation (by its index on ``prep``)."""
    return sorted({pid for found in prep_moved().find({"prep": prep_id}) for pid in found["pids"]})


def _moves_of(
    board_slug: str, due: list[int], prep: dict, copied: bool
) -> dict[str, list[moving.Move]]:
    """{scope: moves} that make the orders of the preparation's day hold these programmers as
    placed when it began (`entries.placed_before_prep`)."""
    by_scope: dict[str, list[moving.Move]] = defaultdict(list)
    for entry in entries.entries_placed(board_slug, due):
        placed = entries.placed_before_prep(entry, prep["id"])
        moves = entries.day_moves(placed, entry["_id"], prep["day"], copied)
        for (_day_key, scope), move in moves.items():
            by_scope[scope].append(move)
    return by_scope


def _pass(board_slug: str, day: int, epoch: int, by_scope: Mapping[str, list[moving.Move]]) -> None:
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


def _programmers_due(window: maths.Window, day: int) -> list[int]:
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

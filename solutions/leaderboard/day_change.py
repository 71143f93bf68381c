"""A new day's orders, made from the day before by the moves the day brings.

The entries forward-date every sum and key (see `maths`), but the orders are kept only up to each
board's **frontier**: today, then tomorrow from the last hour of today on
(`days_kept.frontier_wanted`). A solve moves its programmer in the orders of the days up to the
frontier alone, a day or two, however far ahead its sums reach. Moving the frontier a day on
(**preparing** day d) makes day d's orders from day d-1's, under the applier's lease, before
anybody reads them:

1. the board's journal is folded, so that each of d-1's orders is its root alone;
2. each order of d-1 with somebody on it (everybody's, and each group's, found in d-1's
   ranklists of groups) gets a root on d that is a copy of its root on d-1: it lists the same
   nodes and sets, which both days share until either changes them (see `orders`). The
   ranklists are copied whole instead, as a group's record can stay the same for months and
   shared documents are pruned by age. A calendar period's first day starts empty;
3. the programmers whose place the day changes are moved in d's orders, **in one pass an order**:
   on a rolling window, those who solved on the day that leaves it, and on d itself (a judge's
   clock may run ahead), found in the `solves` log by its index on `solved_at`; no scan of a
   board and no job at midnight. Each moves from what its order of d-1 held to what their
   placement says for d (`entries.day_moves`), so the orders of every day up to the frontier
   hold each entry as placed (see `applier`). Nobody reads d's orders before the frontier
   reaches d, so the moves go straight into them, each order's sets read and written once
   (`order_writes.manifests_move`), not through the journal (whose folds, a thousand
   programmers each, would rewrite most sets of a large order again and again). The groups'
   ranklists move first, from each group's histogram before and after its members' moves, then
   the members' orders. Every root moved is marked with the journal's epoch, so a preparation
   stopped anywhere is carried on by the next lease holder (before it moves anybody: a batch
   that moved a programmer on d-1 alone would leave their copy on d behind), which skips the
   orders marked and does the rest;
4. the frontier moves to d, and the journal's epoch on, in one write: the roots moved hold the
   epoch, which a journal part of it would be taken as laid in already.

Whoever holds the lease prepares: the batches of solves in the last hour of a day, the repair
task (beat, every few minutes) or, on a site where neither ran, the first read of the new day,
which waits for it (`reading`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from bson import Binary
from pymongo import InsertOne
from pymongo.errors import BulkWriteError

from .. import mongo
from . import (
    days_kept,
    encoding,
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


def frontiers_catch_up(boards: Mapping[str, maths.Window | None]) -> dict[str, journals.Head]:
    """As the lease holder: bring each of these boards' frontier to the day wanted now, a day at a
    time. A board's window is the one given, else the one its journal keeps (each given is kept
    there, for the readers and the repair task that know only the board). A board never written
    yet starts at the day wanted: nothing is placed on it. All-time boards have no days and no
    frontier. Returns the boards' journal heads as they are then, which a batch reads before
    the entries (`applier`): read once when no frontier moves, as in most batches."""
    wanted = days_kept.frontier_wanted()
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
            day_prepare(board_slug, window, frontier)
            changed = True
    return journals.journal_heads(boards) if changed else heads


def frontier_start(board_slug: str, window: maths.Window, frontier: int) -> None:
    """A board's journal anew, its orders made up to `frontier` in bulk (a rebuild)."""
    journals.journal_write(
        board_slug,
        journals.journal_read(board_slug),
        {"frontier": frontier, "window": _window_kept(window)},
    )


def _window_kept(window: maths.Window) -> dict:
    kept = {"kind": window.kind, "days": window.days, "streak": window.streak}
    return kept | ({"best": True} if window.best else {})


def _window_of(kept: dict | None) -> maths.Window | None:
    return None if kept is None else maths.Window(**kept)


def day_prepare(board_slug: str, window: maths.Window, day: int) -> None:
    """Make a board's orders of `day` from those of the day before (see the module docstring),
    carrying on a preparation stopped midway."""
    journal = journals.journal_read(board_slug)
    if any(journal.get("p", {}).values()) or journals.fold_first(journal):
        journal = folds.journals_fold({board_slug: journal})[board_slug]
    prep = journal.get("prep") or {}
    copied = not window.starts_period(day)
    if prep.get("day") != day:
        if copied:
            _orders_copy(board_slug, day)
        prep = {"day": day}
        journal = journals.journal_write(board_slug, journal, {"prep": prep})
    # A preparation begun before the pass moved its programmers up to `after` through the
    # journal, folded above: the pass moves the others.
    due = [pid for pid in _programmers_due(window, day) if pid > prep.get("after", -1)]
    by_scope = _moves_of(board_slug, due, day, copied)
    epoch, frontier = journal.get("epoch", 0), {board_slug: journal.get("frontier")}
    ranklists = _ranklist_moves(board_slug, day, epoch, by_scope)
    _pass(board_slug, day, epoch, ranklists, frontier)
    _pass(board_slug, day, epoch, by_scope, frontier)
    changes = {"frontier": day, "prep": None, "epoch": epoch + 1}
    journals.journal_write(board_slug, journal, changes)


def _moves_of(
    board_slug: str, due: list[int], day: int, copied: bool
) -> dict[str, list[moving.Move]]:
    """{scope: moves} that make day `day`'s orders hold these programmers as placed."""
    by_scope: dict[str, list[moving.Move]] = defaultdict(list)
    for entry in entries.entries_placed(board_slug, due):
        for (_day_key, scope), move in entries.day_moves(entry, day, copied).items():
            by_scope[scope].append(move)
    return by_scope


def _pass(
    board_slug: str,
    day: int,
    epoch: int,
    by_scope: Mapping[str, list[moving.Move]],
    frontier: dict[str, int | None],
) -> None:
    """Move day `day`'s orders of these scopes, each in one step of the pass (its sets read and
    written once), orders together up to MOVES_A_STEP moves a step, the lease renewed between
    steps; a root that holds `epoch` already (moved by a preparation stopped later) is left."""
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


def _orders_copy(board_slug: str, day: int) -> None:
    """Day `day`'s roots as copies of the day before's, for every order with somebody on it, and
    its ranklists of groups copied whole (see the module docstring)."""
    before = str(day - 1)
    scopes = [""]
    for kind in groups.KINDS:
        ranklist = groups.ranklist_scope(kind)
        listed = list(reading.records_in_order(board_slug, before, ranklist))
        ids = [encoding.record_programmer(record) for record in listed]  # a group's id
        names = orders.group_names_read(ids)
        scopes += [names[group] for group in ids if group in names]
        _ranklist_copy(board_slug, day, ranklist, listed)
    for start in range(0, len(scopes), 1_000):
        _roots_copy(board_slug, day, scopes[start : start + 1_000])


def _roots_copy(board_slug: str, day: int, scopes: list[str]) -> None:
    """The roots of these scopes on `day` as copies of the day before's: each lists the same
    nodes and sets, which the two days then share until either changes them (see `orders`). A
    root that exists already (a preparation stopped midway and done again) is left as it is,
    and an empty order needs none (an order with no root is empty)."""
    wanted = {orders.order_id(board_slug, str(day - 1), scope): scope for scope in scopes}
    copies = []
    for document in mongo.find_by_ids(orders.orders(), list(wanted)):
        if document.get("hist"):
            copy = {
                **document,
                "_id": orders.order_id(board_slug, str(day), wanted[document["_id"]]),
            }
            copies.append(InsertOne(copy | {"v": 1, "folded": -1, "trash": Binary(b"")}))
    if copies:
        try:
            orders.orders().bulk_write(copies, ordered=False)
        except BulkWriteError as error:
            mongo.raise_unless_duplicates(error)  # copied already by a try before


def _ranklist_copy(board_slug: str, day: int, ranklist: str, records: list[bytes]) -> None:
    """A ranklist of `day` with the day before's records, in documents of its own (unless a
    preparation stopped midway made it already)."""
    order = orders.order_id(board_slug, str(day), ranklist)
    if records and not orders.root_exists(order):
        order_writes.orders_write({order: moving.sets_build(records, born=day)})


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

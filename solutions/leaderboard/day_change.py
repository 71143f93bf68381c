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
3. the programmers whose place the day changes are moved in the journal, as a batch would: on a
   rolling window, those who solved on the day that leaves it, and on d itself (a judge's clock
   may run ahead), found in the `solves` log by its index on `solved_at`; no scan of a board
   and no job at midnight: the work is that of the programmers the day moves. Each moves from
   what its order of d-1 held to what their placement says for d (`entries.day_moves`), so
   the orders of every day up to the frontier hold each entry as placed (see `applier`). A few
   hundred programmers a journal write, each saying how far the preparation got (``prep``), so
   a preparation stopped anywhere is carried on by the next lease holder before it moves
   anybody (a batch that moved a programmer on d-1 alone would leave their copy on d behind);
4. the frontier moves to d, in the journal.

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

PREP_CHUNK = 256  # programmers a preparation moves a journal write


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
    prep = journal.get("prep") or {}
    copied = not window.starts_period(day)
    if prep.get("day") != day:
        if any(journal.get("p", {}).values()) or journals.fold_first(journal):
            journal = folds.journals_fold({board_slug: journal})[board_slug]
        if copied:
            _orders_copy(board_slug, day)
        prep = {"day": day, "after": -1}
    due = [pid for pid in _programmers_due(window, day) if pid > prep["after"]]
    for start in range(0, len(due), PREP_CHUNK):
        lease.keep()  # a day of many programmers takes several seconds
        chunk = due[start : start + PREP_CHUNK]
        by_part: dict[tuple[str, str], list[moving.Move]] = defaultdict(list)
        for entry in entries.entries_placed(board_slug, chunk):
            for place, move in entries.day_moves(entry, day, copied).items():
                by_part[place].append(move)
        progress = {"prep": {"day": day, "after": chunk[-1]}}
        journal = folds.moves_record(board_slug, journal, by_part, progress)
    journals.journal_write(board_slug, journal, {"frontier": day, "prep": None})


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

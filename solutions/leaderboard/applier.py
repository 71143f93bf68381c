"""The applier: who moves the orders after the entries, one batch at a time, under one lease.

**How a solve moves the orders.** The entry changes first (atomically, once); orders follow.
Each entry records in ``placed`` what the orders hold for it and at which ``rev`` of the entry.
One applier at a time moves orders, whoever holds the lease (`lease`, the ``appliers`` document): it
moves each programmer from ``placed`` to their current keys in the journals, then updates
``placed`` (never back to an older ``rev``), then folds the journals that are full. A solve that
finds the lease free takes it, listing its programmer as pending in the same write, and moves
them; one that finds it held lists its programmer as pending there and waits: the next holder
moves everybody pending in one batch, so solves that arrive together cost one batch. The solves
of one process wait together (`turns`): one of them lists, takes the lease and looks for all. A
batch that stops anywhere leaves its programmers pending, and every step can be done again (a
journal pair keeps the record the manifest holds; a fold marks its journal first, and the next
batch finishes it before adding anything), so a retry, the next holder or the repair task
carries on (a solve is marked applied in the ``solves`` log only once its orders moved): nothing
is lost and nothing moves twice. An applier that outlives its lease can still write, but the
sets and nodes it writes are new documents that nothing lists (see `rewrites`), and whatever it
changed first of what is listed makes the next holder's batch give up with everybody pending
(journals, manifests and gone lists are compare-and-swapped, the journals' versions read before
the entries), to try again. `tests/test_stale_applier.py` interleaves two appliers so.
"""

from __future__ import annotations

import secrets
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from pymongo.errors import ClientBulkWriteException, ConnectionFailure, ExecutionTimeout

from .. import mongo
from . import (
    day_change,
    day_moves,
    days_kept,
    entries,
    folds,
    groups,
    journals,
    lease,
    maths,
    moving,
    orders,
    turns,
)

# How long a solve waits for its batch: below gunicorn's timeout (`gunicorn.conf.py`), far above
# a lease (`lease.LEASE_SECONDS`), so a solve outlives a holder that died and moves the batch
# itself. Past it the solve is answered 503 (`OrdersBehind`), never 201: its retry, the next
# holder or the repair task moves it.
APPLY_WAIT_SECONDS = 20.0
APPLY_POLL_SECONDS = (0.015, 0.05)  # a waiter's first and longest pause between looks
# The programmers a batch moves at most: what it writes into a journal stays far below a
# document's 16 MB whatever is pending (2,500 programmers pending at once are ten batches).
BATCH_PROGRAMMERS = 256


class OrdersBehind(ExecutionTimeout):
    """The orders did not take a solve in time: a storage fault that passes (503, Retry-After)."""


@dataclass(frozen=True)
class Moved:
    """What a batch moved, for its caller's finisher: the boards, and the tags of whoever listed
    the programmers (see `orders_catch_up`)."""

    boards: frozenset[str]
    tags: frozenset[str]


@dataclass(frozen=True)
class Finish:
    """What a finisher adds to a batch: writes (models naming their namespace) sent with the
    batch's own, after its moves and before the lease is given back, and what to do once they
    are written."""

    writes: list
    then: Callable[[], object] = lambda: None


Finisher = Callable[[Moved], Finish]
"""What the caller does with what a batch moved (`finish(moved)`), handed in by the caller that
drives the batch: its writes go in the batch's last command, before the lease is given back and
the batch's programmers leave the pending list, so whatever a request needs done once its
programmers moved (its solve marked applied) is written before any request of the batch can
answer. A batch whose writes fail leaves them all pending; the next batch moves them again
(nothing changes) and finishes them. (A value returned after the batch would be written in a
command of its own, after the lease is given back: a request of another process could answer
before it.)"""


def _nothing_to_finish(moved: Moved) -> Finish:
    return Finish([])


# This process's requests waiting for the orders; a storage fault of their driver fails them all.
_TURNS = turns.Turns(shared_failure=ConnectionFailure)


Boards = Mapping[str, maths.Window | None]
"""{board slug: its window}: the boards a batch keeps up to date (None: the window its journal
keeps, see `day_change`)."""


def orders_catch_up(
    wanted: Iterable[tuple[str, int]] = (),
    *,
    tag: str = "",
    boards: Boards | None = None,
    finish: Finisher,
) -> None:
    """Bring the orders up to date with the entries of these (board slug, programmer id) pairs
    (only everything pending when empty). They are listed as pending, and whoever holds the
    lease next moves them with everybody pending, in batches of at most BATCH_PROGRAMMERS
    programmers: this request if the lease is free, else it waits for a holder to move them
    (taking the lease in turn once it is free). The requests of one process wait together
    (`turns`): one of them lists them all, takes the lease and looks at the applier document
    for all of them.

    `tag` marks this request's programmers in the batch (a solve's id, say): `finish` (see
    `Finisher`) does the work of every request in each batch at once. `boards`: the
    boards whose days every batch first prepares (`day_change`), with those of the pending
    programmers. Raises `OrdersBehind` when they are still pending after APPLY_WAIT_SECONDS:
    the next holder or the repair task moves them."""
    token = secrets.token_hex(8)
    wanted = sorted(set(wanted))
    boards = dict(boards or {})
    if not wanted:
        # Everybody pending, a batch at a time while the lease is free (with nobody pending, a
        # batch prepares the boards' days alone).
        holder, pending = lease.take(token, [])
        while holder and set(pending) - set(_batch_move(token, pending, boards, finish)):
            holder, pending = lease.take(token, [])
        return
    items = frozenset(lease.item(slug, pid, tag or token) for slug, pid in wanted)
    me = turns.Waiter(items, time.monotonic() + APPLY_WAIT_SECONDS)
    _TURNS.wait(me, lambda me: _drive(token, me, boards, finish))
    if not me.settled:
        raise OrdersBehind(f"the orders did not take {len(items)} moves in time")


def day_wait(board_slug: str, day: int) -> None:
    """Wait until a board's orders reach `day`, preparing it as the lease holder if the lease is
    free (see `day_change`): the first read of a day that no holder prepared before midnight
    (no solve and no prepare task in its last hour), or of tomorrow in the last hour of today
    (whose pass the reader does, unless a preparer is doing it). Raises `OrdersBehind` after
    APPLY_WAIT_SECONDS. A day past the frontier wanted now has no orders to wait for: its sums
    are only a forecast. The reader prepares the day and places nobody pending: what placing
    them finishes (`Finisher`) is for the requests that listed them, which move them once the
    lease is free."""
    if day > days_kept.frontier_wanted():
        raise ValueError(f"day {day} of {board_slug} is a forecast: it has no orders yet")
    deadline = time.monotonic() + APPLY_WAIT_SECONDS
    pause = APPLY_POLL_SECONDS[0]
    while True:
        token = secrets.token_hex(8)
        holder, pending = lease.take(token, [])
        if holder:
            _batch_move(token, [], {board_slug: None}, _nothing_to_finish)
        head = journals.journal_heads([board_slug])[board_slug]
        if head.frontier is None or head.frontier >= day:
            return
        if day_change.days_pass({board_slug: None}):
            continue  # tomorrow, read in the last hour of today: passed here, finished next
        if time.monotonic() > deadline:
            raise OrdersBehind(f"the orders of {board_slug} are not prepared for day {day}")
        time.sleep(pause)
        pause = min(pause * 1.5, APPLY_POLL_SECONDS[1])


def _drive(token: str, me: turns.Waiter, boards: Boards, finish: Finisher) -> None:
    """Drive for every request of this process waiting for the orders, until `me` is settled or
    out of time: list them (taking the lease if it is free), move everybody pending while
    holding it, a batch at a time, and otherwise look every few dozen milliseconds which of
    them another holder moved, taking the lease once it is free. Only a request listed before
    a look can be settled by it: one not listed yet is not pending because nobody listed it. A
    batch that meets the writes of an applier that outlived its lease (`orders.OrdersConflict`)
    gives the lease back with everybody still pending, and the requests wait on as if another
    holder had it."""
    pause = APPLY_POLL_SECONDS[0]
    take = True
    while not me.settled and time.monotonic() < me.deadline:
        if take:
            waiting = _TURNS.unsettled()
            holder, pending = lease.take(token, sorted({i for w in waiting for i in w.items}))
            _TURNS.mark_listed(waiting)
            if holder:
                try:
                    moved = set(_batch_move(token, pending, boards, finish))
                except orders.OrdersConflict:
                    pass  # an applier that outlived its lease wrote first: all stay pending
                else:
                    _TURNS.settle(moved.issuperset)
                    continue  # `me` among them, or the next batch at once
        time.sleep(pause)
        pause = min(pause * 1.5, APPLY_POLL_SECONDS[1])
        pending_now, free = lease.pending_now()
        _TURNS.settle(pending_now.isdisjoint)
        take = free or any(not w.listed for w in _TURNS.unsettled())


def _batch_move(token: str, pending: list[str], boards: Boards, finish: Finisher) -> list[str]:
    """As the lease holder, prepare the boards' days (`day_change`), move the first
    BATCH_PROGRAMMERS programmers pending, finish the batch (`finish(moved)`, written with it)
    and give the lease back; returns the pending items it moved."""
    batch = _batch_of(pending)
    items = [lease.item_parts(item) for item in batch]
    moved = Moved(frozenset(board for board, *_ in items), frozenset(tag for *_, tag in items))
    try:
        heads = day_change.frontiers_catch_up({**dict.fromkeys(moved.boards), **boards})
        lease.keep()
        writes = _orders_apply({(board, pid) for board, pid, _tag in items}, heads)
        finished = finish(moved)
        writes += finished.writes
        _batch_write([*writes, lease.release_write(token, batch)])
    except BaseException:
        # Everything stays pending for the next holder; after a fault, give up in bounded time.
        mongo.cleanup(lambda: lease.release(token, None))
        raise
    finished.then()
    return batch


def _batch_write(writes: list) -> None:
    """A batch's last writes in one command, in order (`mongo.write_together`): the journals'
    compare-and-swaps first, so a journal another applier changed stops all that follows."""
    try:
        mongo.write_together(writes)
    except ClientBulkWriteException as error:
        raise mongo.conflict_or_fault(
            error, orders.OrdersConflict, "a journal changed since it was read"
        ) from error


def _batch_of(pending: list[str]) -> list[str]:
    """The pending items of the first BATCH_PROGRAMMERS programmers (by id), on every board."""
    programmers = sorted({lease.item_parts(item)[1] for item in pending})[:BATCH_PROGRAMMERS]
    taken = set(programmers)
    return [item for item in pending if lease.item_parts(item)[1] in taken]


# --- a batch -------------------------------------------------------------------------------------


def _orders_apply(wanted: set[tuple[str, int]], heads: dict[str, journals.Head]) -> list:
    """Move these (board slug, programmer id) in every order they are in, on every board at once:
    record the moves in the boards' journals (one read of the pairs of the programmers moved,
    one update of those pairs), with the moves of the groups whose scores they change in the
    groups' ranklists (`folds.group_moves`), then what the orders hold for each programmer
    (never over a newer record of a later applier), then fold the journals that are full. In
    that sequence a batch that stops anywhere leaves its programmers pending with journals and
    records that the next batch carries on from: a journal's part keeps, for each programmer,
    the record the manifest holds, so moving them again from an older record changes nothing
    that matters; and a fold, which forgets what it moved, only ever follows the records of what
    it moves. Returns the journals' and the records' writes, for
    the batch to send with its others (`_batch_write`); a batch that folds sends them first.

    The journals' versions are read before the entries, and the journals must still have them
    after: an applier that outlived its lease may append, record and fold between this batch's
    reads, and a record of the entries older than the journals would move a programmer out of
    a place the orders no longer hold (`orders.OrdersConflict`: everybody stays pending)."""
    if not wanted:
        return []
    behind, by_part, named = _batch_moves(wanted, heads)
    if not behind:
        return []
    journal_of, bases = _journals_read(by_part, heads)
    for board, parts in folds.group_moves(journal_of, bases, by_part).items():
        by_part[board].update(parts)
    orders.group_names_write(named)  # before any ranklist can hold them
    appended = {
        board: journals.journal_append(journal_of[board], parts, board)
        for board, parts in by_part.items()
    }
    writes = journals.journals_append_writes(appended.values())
    preps = _preps_under_way(heads, behind)
    moved = {board: [entry.programmer_id for entry in them] for board, them in behind.items()}
    writes += day_moves.placed_moved_writes(preps, moved) + entries.placed_writes(behind, preps)
    full = {b: a.journal for b, a in appended.items() if a.journal["n"] > journals.JOURNAL_MAX}
    if full:
        _batch_write(writes)
        folds.journals_fold(full)
        return []
    return writes


def _preps_under_way(heads: dict[str, journals.Head], boards: Iterable[str]) -> dict[str, dict]:
    """{board: its next day's preparation} of these boards with one begun (see `day_change`):
    the batch records whom it moves there, and what the orders held for them."""
    preps = {board: heads[board].prep or {} for board in boards}
    return {board: prep for board, prep in preps.items() if "id" in prep}


def _journals_read(
    by_part: dict[str, dict[tuple[str, str], list]], heads: dict[str, journals.Head]
) -> tuple[dict[str, dict], dict]:
    """The journals a batch appends to, with the pairs of the programmers it moves, still at
    the versions read before the entries, a fold stopped midway finished first; and the
    histograms of the groups' orders it moves (`journals.journals_read`)."""
    ranked = sorted(
        orders.order_id(board, day_key, scope)
        for board, parts in by_part.items()
        for day_key, scope in parts
        if groups.kind_of(scope)
    )
    journal_of, bases = journals.journals_read(by_part, ranked)
    if any(journal.get("v", 0) != heads[board].version for board, journal in journal_of.items()):
        raise orders.OrdersConflict("a journal changed while the entries were read")
    if half_folded := {b: j for b, j in journal_of.items() if journals.fold_first(j)}:
        journal_of.update(folds.journals_fold(half_folded))  # finished before anything is added
        bases = journals.journals_read({}, ranked)[1]  # as the fold left them
    return journal_of, bases


def _batch_moves(
    wanted: set[tuple[str, int]], heads: dict[str, journals.Head]
) -> tuple[dict[str, list[entries.Behind]], dict[str, dict[tuple[str, str], list]], set[str]]:
    """What a batch moves, from the entries of these (board slug, programmer id), one read a
    board: ({board: [entry]} of those whose orders are behind, {board: {(day, scope): moves}},
    the groups some of them join). Each board's orders reach its frontier (`heads`): a board
    the day change does not keep (all-time, or never prepared) has its day wanted now."""
    by_board: dict[str, list[int]] = defaultdict(list)
    for board_slug, pid in wanted:
        by_board[board_slug].append(pid)
    oldest = days_kept.history_from(days_kept.current_day())
    wanted_now = days_kept.frontier_wanted()
    behind: dict[str, list[entries.Behind]] = {}
    by_part: dict[str, dict[tuple[str, str], list[moving.Move]]] = {}
    named: set[str] = set()
    for board_slug, pids in sorted(by_board.items()):
        frontier = heads[board_slug].frontier
        frontier = wanted_now if frontier is None else frontier
        for entry in entries.entries_behind(board_slug, pids):
            behind.setdefault(board_slug, []).append(entry)
            parts = by_part.setdefault(board_slug, defaultdict(list))
            for place, move in entry.moves(oldest, frontier).items():
                parts[place].append(move)
            named.update(entry.groups_joined())
    return behind, by_part, named


# --- entries recomputed from the log -------------------------------------------------------------


def entries_replace(
    programmer_id: int,
    documents: dict[str, dict | None],
    boards: Boards | None = None,
    *,
    finish: Finisher,
) -> None:
    """Set a programmer's entries ({board slug: entry computed from their solves, None: off the
    board}), keeping what the orders hold, then bring the orders along (only this programmer
    moves). The programmer is listed as pending first, so a crash right after still leaves the
    orders to the next applier."""
    marker = secrets.token_hex(8)
    lease.pending_add([lease.item(slug, programmer_id, marker) for slug in documents])
    entries.entries_set(programmer_id, documents)
    orders_catch_up([(slug, programmer_id) for slug in documents], boards=boards, finish=finish)

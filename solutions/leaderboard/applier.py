"""The applier: who moves the orders after the entries, one batch at a time, under one lease.

**How a solve moves the orders.** The entry changes first (atomically, once); orders follow.
Each entry records in ``placed`` what the orders hold for it and at which ``rev`` of the entry.
One applier at a time moves orders, whoever holds the lease of the ``appliers`` document: it
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
sets and nodes it writes are new documents that nothing lists (see `moving`), and whatever it
changed first of what is listed makes the next holder's batch give up with everybody pending
(journals, manifests and gone lists are compare-and-swapped, the journals' versions read before
the entries), to try again. `tests/test_stale_applier.py` interleaves two appliers so.
"""

from __future__ import annotations

import datetime as dt
import secrets
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from django.utils import timezone
from pymongo import ReturnDocument
from pymongo.collection import Collection
from pymongo.errors import ConnectionFailure, DuplicateKeyError

from .. import mongo
from . import day_change, days_kept, entries, groups, journals, maths, moving, orders, turns

APPLY_LEASE = dt.timedelta(seconds=30)  # longer than any batch takes; frees a crashed applier
# How long a solve waits for another request to apply it: longer than the lease, so a solve
# outlives an applier that died holding it (its server was killed under it) and applies the
# batch itself. Its answer then means that it is listed, with no repair task needed.
APPLY_WAIT_SECONDS = 40.0
APPLY_POLL_SECONDS = (0.015, 0.05)  # a waiter's first and longest pause between looks
LEASE = "orders"  # the one applier document: every solve moves orders of every board


def appliers() -> Collection:
    return mongo.get_db()["appliers"]


# --- the lease and who is pending ---------------------------------------------------------------


def _item(board_slug: str, programmer_id: int, tag: str) -> str:
    """A pending entry of the applier document, "board|id|tag": a programmer on a board, tagged
    by whoever listed them (so one request's listing is never mistaken for another's)."""
    return f"{board_slug}|{programmer_id}|{tag}"


def _item_parts(item: str) -> tuple[str, int, str]:
    """(board slug, programmer id, tag) of a pending entry made by `_item`."""
    board_slug, programmer_id, tag = item.split("|")
    return board_slug, int(programmer_id), tag


def _applier_update(update: dict) -> None:
    """Change the applier document, made on first use. Two first uses at once can both try to
    make it: the loser's update is simply applied again (each is idempotent)."""
    try:
        appliers().update_one({"_id": LEASE}, update, upsert=True)
    except DuplicateKeyError:
        appliers().update_one({"_id": LEASE}, update)


def _pending_add(items: list[str]) -> None:
    if items:
        _applier_update({"$addToSet": {"pending": {"$each": items}}})


def pending_clear(board_slug: str) -> None:
    """Forget the programmers pending on a board (its orders were just rebuilt from scratch)."""
    _applier_update({"$pull": {"pending": {"$regex": f"^{board_slug}\\|"}}})


def _lease_take(token: str, listed: list[str]) -> tuple[bool, list[str]]:
    """List `listed` as pending and take the lease if it is free (or expired), in one write:
    (whether this request now holds the lease, everything pending). A holder that stops midway
    leaves what it listed to the next one; a request that finds the lease held is listed for
    the holder's next batch by the same write. The applier collection holds one document, so
    even the embedded server's `findAndModify` is cheap."""
    now = timezone.now()
    free = {"$not": [{"$gt": [{"$ifNull": ["$until", None]}, now]}]}
    update = {
        "token": {"$cond": [free, token, "$token"]},
        "until": {"$cond": [free, now + APPLY_LEASE, "$until"]},
        "pending": {"$setUnion": [{"$ifNull": ["$pending", []]}, listed]},
    }
    document = None
    for _attempt in range(2):  # two first uses at once: the loser's write goes again
        try:
            document = appliers().find_one_and_update(
                {"_id": LEASE},
                [{"$set": update}],
                projection={"pending": 1, "token": 1},
                upsert=True,
                return_document=ReturnDocument.AFTER,
            )
            break
        except DuplicateKeyError:
            continue
    if document is None:
        # Under concurrent writers SecantusDB 0.7 can answer "nothing matched" to a
        # findAndModify that did its write: look, and list them if it did not.
        document = appliers().find_one({"_id": LEASE}, {"pending": 1, "token": 1}) or {}
        if document.get("token") != token and not set(listed) <= set(document.get("pending", [])):
            _pending_add(listed)
    return document.get("token") == token, list(document.get("pending", []))


def _lease_release(token: str, done: list[str] | None) -> None:
    """Give the lease back; `done`: what was moved (None: nothing, the batch failed), pulled
    from the pending entries."""
    update: dict = {"$set": {"until": None}}
    if done:
        update["$pullAll"] = {"pending": done}
    appliers().update_one({"_id": LEASE, "token": token}, update)


def _pending_now() -> tuple[set[str], bool]:
    """(everything pending, whether the lease is free): one `_id` read."""
    document = appliers().find_one({"_id": LEASE}, {"pending": 1, "until": 1}) or {}
    until = document.get("until")
    return set(document.get("pending", [])), until is None or until <= timezone.now()


@dataclass(frozen=True)
class Moved:
    """What a batch moved, for its finishers (`on_batch_moved`): the boards, and the tags of
    whoever listed the programmers (see `orders_catch_up`)."""

    boards: frozenset[str]
    tags: frozenset[str]


# What every batch does once its moves are written (`on_batch_moved`).
_BATCH_FINISHERS: list[Callable[[Moved], object]] = []


def on_batch_moved(finish: Callable[[Moved], object]) -> None:
    """Run `finish(moved)` in every batch that moves the orders, before the lease is given back
    and the batch's programmers leave the pending list: whatever a request needs done once its
    programmers moved (its solve marked applied) is done before any request of the batch can
    answer. A batch whose finisher fails leaves them all pending; the next batch moves them
    again (nothing changes) and finishes them."""
    if finish not in _BATCH_FINISHERS:
        _BATCH_FINISHERS.append(finish)


# This process's requests waiting for the orders; a storage fault of their driver fails them all.
_TURNS = turns.Turns(shared_failure=ConnectionFailure)


Boards = Mapping[str, maths.Window | None]
"""{board slug: its window}: the boards a batch keeps up to date (None: the window its journal
keeps, see `day_change`)."""


def orders_catch_up(
    wanted: Iterable[tuple[str, int]] = (), *, tag: str = "", boards: Boards | None = None
) -> None:
    """Bring the orders up to date with the entries of these (board slug, programmer id) pairs
    (only everything pending when empty). They are listed as pending, and whoever holds the
    lease next moves them with everybody pending, in one batch: this request if the lease is
    free, else it waits for a holder to move them (taking the lease in turn once it is free).
    The requests of one process wait together (`turns`): one of them lists them all, takes the
    lease and looks at the applier document for all of them.

    `tag` marks this request's programmers in the batch (a solve's id, say): the batch's
    finishers (`on_batch_moved`) do the work of every request in it at once. `boards`: the
    boards whose days every batch first prepares (`day_change`), with those of the pending
    programmers. Waiting ends after APPLY_WAIT_SECONDS: whatever is still pending is moved by
    the next holder or the repair task."""
    token = secrets.token_hex(8)
    wanted = sorted(set(wanted))
    boards = dict(boards or {})
    if not wanted:
        holder, pending = _lease_take(token, [])
        if holder:
            _batch_move(token, pending, boards)
        return
    items = frozenset(_item(slug, pid, tag or token) for slug, pid in wanted)
    me = turns.Waiter(items, time.monotonic() + APPLY_WAIT_SECONDS)
    _TURNS.wait(me, lambda me: _drive(token, me, boards))


def day_wait(board_slug: str, day: int) -> None:
    """Wait until a board's orders reach `day`, preparing it as the lease holder if the lease is
    free (see `day_change`): the first read of a day that no holder prepared before midnight
    (no solve and no repair task in its last hour). Gives up after APPLY_WAIT_SECONDS. A day
    past the frontier wanted now has no orders to wait for: its sums are only a forecast."""
    if day > days_kept.frontier_wanted():
        raise ValueError(f"day {day} of {board_slug} is a forecast: it has no orders yet")
    deadline = time.monotonic() + APPLY_WAIT_SECONDS
    pause = APPLY_POLL_SECONDS[0]
    while True:
        token = secrets.token_hex(8)
        holder, pending = _lease_take(token, [])
        if holder:
            _batch_move(token, pending, {board_slug: None})
        head = journals.journal_heads([board_slug])[board_slug]
        if head.frontier is None or head.frontier >= day:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"the orders of {board_slug} are not prepared for day {day}")
        time.sleep(pause)
        pause = min(pause * 1.5, APPLY_POLL_SECONDS[1])


def _drive(token: str, me: turns.Waiter, boards: Boards) -> None:
    """Drive for every request of this process waiting for the orders, until `me` is settled or
    out of time: list them (taking the lease if it is free), move everybody pending while
    holding it, and otherwise look every few dozen milliseconds which of them another holder
    moved, taking the lease once it is free. Only a request listed before a look can be settled
    by it: one not listed yet is not pending because nobody listed it. A batch that meets the
    writes of an applier that outlived its lease (`orders.OrdersConflict`) gives the lease back
    with everybody still pending, and the requests wait on as if another holder had it."""
    pause = APPLY_POLL_SECONDS[0]
    take = True
    while not me.settled and time.monotonic() < me.deadline:
        if take:
            waiting = _TURNS.unsettled()
            holder, pending = _lease_take(token, sorted({i for w in waiting for i in w.items}))
            _TURNS.mark_listed(waiting)
            if holder:
                try:
                    _batch_move(token, pending, boards)
                except orders.OrdersConflict:
                    pass  # an applier that outlived its lease wrote first: all stay pending
                else:
                    _TURNS.settle(set(pending).issuperset)  # `me` among them
                    return
        time.sleep(pause)
        pause = min(pause * 1.5, APPLY_POLL_SECONDS[1])
        pending_now, free = _pending_now()
        _TURNS.settle(pending_now.isdisjoint)
        take = free or any(not w.listed for w in _TURNS.unsettled())


def _batch_move(token: str, pending: list[str], boards: Boards) -> None:
    """As the lease holder, prepare the boards' days (`day_change`), move everybody pending,
    finish the batch (`on_batch_moved`) and give the lease back."""
    items = [_item_parts(item) for item in pending]
    moved = Moved(frozenset(board for board, *_ in items), frozenset(tag for *_, tag in items))
    try:
        day_change.frontiers_catch_up({**dict.fromkeys(moved.boards), **boards})
        _orders_apply({(board, pid) for board, pid, _tag in items})
        for finish in _BATCH_FINISHERS:
            finish(moved)
    except BaseException:
        # Everything stays pending for the next holder; after a fault, give up in bounded time.
        mongo.cleanup(lambda: _lease_release(token, None))
        raise
    _lease_release(token, pending)


# --- a batch -------------------------------------------------------------------------------------


def _orders_apply(wanted: set[tuple[str, int]]) -> None:
    """Move these (board slug, programmer id) in every order they are in, on every board at once:
    record the moves in the boards' journals (one read, one write), with the moves of the groups
    whose scores they change in the groups' ranklists (`journals.group_moves`), then what the
    orders hold for each programmer (never over a newer record of a later applier), then fold the
    journals that are full. In that sequence a batch that stops anywhere leaves its programmers
    pending with journals and records that the next batch carries on from: a journal's part
    keeps, for each programmer, the record the manifest holds, so moving them again from an older
    record changes nothing that matters; and a fold, which forgets what it moved, only ever
    follows the records of what it moves.

    The journals' versions are read before the entries, and the journals must still have them
    after: an applier that outlived its lease may append, record and fold between this batch's
    reads, and a record of the entries older than the journals would move a programmer out of
    a place the orders no longer hold (`orders.OrdersConflict`: everybody stays pending)."""
    if not wanted:
        return
    heads = journals.journal_heads({board for board, _pid in wanted})
    behind, by_part, named = _batch_moves(wanted, heads)
    if not behind:
        return
    ranked = sorted(
        orders.order_id(board, day_key, scope)
        for board, parts in by_part.items()
        for day_key, scope in parts
        if groups.kind_of(scope)
    )
    journal_of, bases = journals.journals_read(by_part, ranked)
    if any(journal.get("v", 0) != heads[board].version for board, journal in journal_of.items()):
        raise orders.OrdersConflict("a journal changed while the entries were read")
    if half_folded := {b: j for b, j in journal_of.items() if j.get("folding")}:
        journal_of.update(journals.journals_fold(half_folded))  # finished before anything is added
        bases = journals.journals_read((), ranked)[1]  # as the fold left them
    for board, parts in journals.group_moves(journal_of, bases, by_part).items():
        by_part[board].update(parts)
    orders.group_names_write(named)  # before any ranklist can hold them
    appended = {
        board: journals.journal_append(journal_of[board], parts) for board, parts in by_part.items()
    }
    journals.journals_swap(journal_of, appended)
    entries.placed_record(behind)
    if full := {board: j for board, j in appended.items() if j["n"] > journals.JOURNAL_MAX}:
        journals.journals_fold(full)


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
    programmer_id: int, documents: dict[str, dict | None], boards: Boards | None = None
) -> None:
    """Set a programmer's entries ({board slug: entry computed from their solves, None: off the
    board}), keeping what the orders hold, then bring the orders along (only this programmer
    moves). The programmer is listed as pending first, so a crash right after still leaves the
    orders to the next applier."""
    marker = secrets.token_hex(8)
    _pending_add([_item(slug, programmer_id, marker) for slug in documents])
    entries.entries_set(programmer_id, documents)
    orders_catch_up([(slug, programmer_id) for slug in documents], boards=boards)

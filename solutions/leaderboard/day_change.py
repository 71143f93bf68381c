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
   (`day_moves.placed_moved_writes`) and, the first time, what the orders held for them before
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
   gone. While the batches moved more than a few hundred programmers meanwhile, the pass goes
   on in **rounds** (a few at most): the applier's lease, taken for a moment, gives the
   preparation a new id and epoch (an entry moved during two rounds in a row keeps what the
   orders held for it when each began, ``prep_from`` and its ``prev``), and off the lease the
   round moves those the batches moved during the round before, from what the orders held for
   them when it began to what they held when this one began. The journal records the pass
   done.
3. **Finish** (`day_finish`, the lease holder): those the batches moved during the last round
   move in d's orders from what that round placed them as to what the orders of d-1 hold for
   them now (a few hundred, bounded by the rounds, not by the board), their groups in the
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
from collections.abc import Mapping

from .. import mongo
from . import (
    day_copies,
    day_moves,
    days_kept,
    entries,
    folds,
    journals,
    lease,
    maths,
    moving,
    orders,
)

# The pass goes on in rounds while the batches move more programmers meanwhile than this, so
# that the finish, under the lease, moves a few hundred at most (some 5 ms of the server each).
FINISH_PROGRAMMERS = 200
PASS_ROUNDS = 4  # rounds at most: a pass ends however fast the solves come
ROUND_WAIT_SECONDS = 2.0  # how long a round waits for the applier's lease to begin
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
    begun if it was not, its pass done if it was not (in one round: no batch moves anybody
    meanwhile), finished (see the module docstring)."""
    prep = day_begin(board_slug, window, day)
    if not prep.get("passed"):
        day_pass(board_slug, window, prep, rounds=False)
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


def day_pass(board_slug: str, window: maths.Window, prep: dict, *, rounds: bool = True) -> None:
    """Move the programmers the day changes in its orders (step 2), as the board's preparer
    (`lease.preparer_take`) or the lease holder, then mark the pass done in the journal. Each
    moves from what the orders held for them when the preparation began to what that placement
    says for the day, so the moves are the same whenever the pass runs, whatever the batches
    meanwhile; a root that holds the pass's epoch was moved by a pass stopped later.

    Then, while the batches moved more than FINISH_PROGRAMMERS programmers during the last
    round (`rounds`), another **round**, up to PASS_ROUNDS in all: the applier's lease taken
    for a moment begins it (`_round_begin`: a preparation id and an epoch of its own), and off
    the lease it moves those programmers in the day's orders from what the orders of the day
    before held for them when the last round began to what they held when this one began. The
    finish, under the lease, is left with those the batches moved during the last round."""
    if not prep.get("copied"):
        day_copies.orders_copy(board_slug, prep["day"])
        prep = _prep_mark(board_slug, prep, copied=True)
    while True:
        # A round stopped anywhere is done again: the roots it moved hold its epoch already.
        moves = _round_moves(board_slug, window, prep)
        day_moves.moves_write(board_slug, prep["day"], prep["epoch"], moves)
        if not rounds or not _round_due(prep):
            break
        if (next_round := _round_begin(board_slug, prep)) is None:
            break  # the lease is busy: the finish moves them all
        prep = next_round
    _prep_mark(board_slug, prep, passed=True)


def _round_moves(board_slug: str, window: maths.Window, prep: dict) -> dict[str, list[moving.Move]]:
    """{scope: moves} of a round of the pass (see `day_pass`): the first, whoever the day
    changes, from what the orders held for them when the preparation began; a later one,
    whoever the batches moved during the round before."""
    if "prev" not in prep:
        return day_moves.due_moves(board_slug, window, prep)
    prev, this = prep["prev"], prep["id"]
    return day_moves.moves_between(
        board_slug,
        prep["day"],
        day_moves.moved_during(prev),
        lambda entry: entries.placed_before_prep(entry, prev, then=this),
        lambda entry: entries.placed_before_prep(entry, this),
    )


def _round_due(prep: dict) -> bool:
    """Whether the pass goes on with another round: the batches moved more programmers during
    this one than the finish is left, and the rounds are not all taken."""
    if prep.get("round", 1) >= PASS_ROUNDS:
        return False
    return len(day_moves.moved_during(prep["id"])) > FINISH_PROGRAMMERS


def _round_begin(board_slug: str, prep: dict) -> dict | None:
    """Begin the pass's next round (see `day_pass`) as the applier's lease holder for a moment,
    waiting for the lease up to ROUND_WAIT_SECONDS: a new preparation id, which the batches
    record from now on (`day_moves.placed_moved_writes`, ``prep_from``), the last one kept as
    ``prev``, and an epoch of its own, the journal's moving on (a fold stopped midway is
    finished first, so that no root holds that epoch). Returns the round as the journal keeps
    it, or None when the lease stayed busy."""
    lease.keep()  # the preparer's, which is not renewed while it waits
    with lease.taken_for_a_step(secrets.token_hex(8), ROUND_WAIT_SECONDS) as held:
        if not held:
            return None
        journal = journals.journal_read(board_slug)
        now = journal.get("prep") or {}
        if now.get("id") != prep["id"]:
            raise orders.OrdersConflict("the preparation was finished or dropped meanwhile")
        if journals.fold_first(journal):
            journal = folds.journals_fold({board_slug: journal})[board_slug]
        epoch, rounds = journal.get("epoch", 0), now.get("round", 1)
        then = {**now, "id": secrets.token_hex(8), "prev": now["id"], "epoch": epoch}
        then |= {"round": rounds + 1}
        journals.journal_write(board_slug, journal, {"prep": then, "epoch": epoch + 1})
        return then


def _prep_mark(board_slug: str, prep: dict, **marks: bool) -> dict:
    """Mark a preparation's step done in the journal (``copied``, ``passed``), over
    the version read (the lease holder may write it meanwhile: read again and tried again);
    returns the preparation as marked. A preparation that is not the journal's any more
    (another preparer's pass was finished, or a rebuild started the board afresh) stops its
    preparer (`orders.OrdersConflict`)."""
    tries = 0
    while True:
        journal = journals.journal_read(board_slug)
        now = journal.get("prep") or {}
        if now.get("id") != prep["id"]:
            raise orders.OrdersConflict("the preparation was finished or dropped meanwhile")
        try:
            journals.journal_write(board_slug, journal, {"prep": {**now, **marks}})
            return {**now, **marks}
        except orders.OrdersConflict:
            tries += 1
            if tries == PREP_MARK_TRIES:
                raise


def day_finish(board_slug: str, day: int) -> None:
    """As the lease holder: once its pass is done, move in day `day`'s orders those that batches
    moved during its last round (`day_moves.placed_moved_writes`), from what the round placed
    them as to what the orders of the day before hold for them now, then move the frontier to
    `day` (step 3)."""
    journal = journals.journal_read(board_slug)
    prep, epoch = journal.get("prep") or {}, journal.get("epoch", 0)
    if not begun(prep, day) or not prep.get("passed"):
        # Dropped meanwhile (a rebuild started the board afresh): the batch starts again.
        raise orders.OrdersConflict(f"the preparation of {board_slug}'s day {day} is gone")
    moved = day_moves.moves_between(
        board_slug,
        day,
        day_moves.moved_during(prep["id"]),
        lambda entry: entries.placed_before_prep(entry, prep["id"]),
        entries.placed_of,
    )
    day_moves.moves_write(board_slug, day, epoch, moved)
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

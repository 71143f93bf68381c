"""Folding the journals into the orders, and the moves a batch records in them with the groups'.

A journal that holds JOURNAL_MAX programmers' pairs is folded by the batch that filled it
(`journals_fold`): each part's moves go into its order (`order_writes.manifests_move`) and the
journal is emptied in a new epoch. A fold marks its journal first, so that nobody adds to it
until it is emptied and the next batch finishes a fold that stopped midway.

**Group ranklists** (scope ``groups:country`` or ``groups:org`` of each board day): the groups
ranked against each other, one record a group computed from its own order's histogram (see
`groups`), kept as an order like the others. A batch moving programmers in a group's order needs
that order's histogram as readers see it (the manifest's with the part laid over it) before and
after its moves (`group_moves`): rather than the whole part, it reads the sum its pairs make of the
histogram (``h.<part key>``: {score: change of its count}, kept by ``$inc`` in the same update as
the pairs), and records each group's move in the ranklist's part (a histogram of buckets, see
`sets`, takes the records from the order and the whole part instead:
`reading.group_records_moved`); folds, pages and prunes treat them as any order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from . import (
    day_copies,
    days_kept,
    groups,
    journals,
    lease,
    maths,
    moving,
    order_writes,
    orders,
    reading,
    sets,
)


def moves_record(board_slug: str, journal: dict, by_part: journals.Parts, changes: dict) -> dict:
    """Record these moves of one board in its journal, with the moves of the groups whose scores
    they change in the ranklists (`group_moves`), and these fields changed, in one write
    (compare-and-swap over the version of `journal`); fold it when full. Reads only what the
    moves change, as a batch does. Returns the journal as it is then."""
    ranked = [
        orders.order_id(board_slug, day_key, scope)
        for day_key, scope in by_part
        if groups.kind_of(scope)
    ]
    read, bases = journals.journals_read({board_slug: by_part}, ranked)
    if read[board_slug].get("v", 0) != journal.get("v", 0):
        raise orders.OrdersConflict("a journal changed since it was read")
    if journals.fold_first(read[board_slug]):
        journals_fold(read)
        read, bases = journals.journals_read({board_slug: by_part}, ranked)
    moves = {board_slug: dict(by_part)}
    for board, parts in group_moves(read, bases, moves).items():
        moves[board].update(parts)
    append = journals.journal_append(read[board_slug], moves[board_slug], board_slug, changes)
    journals.journals_swap([append.swap()])
    if append.journal["n"] > journals.JOURNAL_MAX:
        return journals_fold({board_slug: append.journal})[board_slug]
    return append.journal


def _part_moves(part: Mapping[str, bytes]) -> list[moving.Move]:
    """The moves that fold a journal's part into its order: each programmer out of the record
    the manifest holds and into their new one."""
    moves = []
    for gone, came in journals.part_pairs(part).values():
        moves += [moving.Move(gone, None)] if gone is not None else []
        moves += [moving.Move(None, came)] if came is not None else []
    return moves


def journals_fold(journal_of: dict[str, dict]) -> dict[str, dict]:
    """Move the journals' moves into the orders (`order_writes.manifests_move`: exact, as it
    reads the sets a member leaves) and empty them in a new epoch; returns them emptied. The
    journals are read whole first, at the versions given. A journal is marked as folding first,
    so that nobody adds to it until it is emptied (a manifest that already holds its epoch
    ignores its part, so it would ignore anything added there too) and the next batch finishes
    a fold that stopped midway: it moves the same members from the same manifests (sets the
    stopped fold wrote are repaired into them as they are read, `moving.manifest_repair`), so
    each is held once."""
    current = journals.journals_whole(journal_of)
    _copies_made(current)
    marking = {b: {**j, "v": j.get("v", 0) + 1, "folding": True} for b, j in current.items()}
    marking = {board: j for board, j in marking.items() if not current[board].get("folding")}
    if marking:
        marks = [
            (b, j["v"] - 1, {"$set": {"v": j["v"], "folding": True}}) for b, j in marking.items()
        ]
        journals.journals_swap(marks)
        current |= marking
    lease.keep()  # a fold reads and writes many sets
    oldest = days_kept.history_from(days_kept.current_day())
    folding = {}
    for board, journal in current.items():
        for key, part in journal.get("p", {}).items():
            day_key, scope = journals.part_order(key)
            if part and (day_key == maths.ALL_TIME_KEY or int(day_key) >= oldest):  # else pruned
                moves = _part_moves(part)
                folding[orders.order_id(board, day_key, scope)] = (journal.get("epoch", 0), moves)
    exclusive = {board: journals.frontier_exclusive(j) for board, j in current.items()}
    order_writes.manifests_move(folding, exclusive)
    empty = {"folding": False, "n": 0, "p": {}, "h": {}, "layout": journals.LAYOUT}
    emptied = {
        b: {"v": j["v"] + 1, "epoch": j.get("epoch", 0) + 1, **empty} for b, j in current.items()
    }
    journals.journals_swap([(b, current[b]["v"], {"$set": j}) for b, j in emptied.items()])
    kept = {b: {k: j[k] for k in journals.KEPT if k in j} for b, j in current.items()}
    return {b: {**kept[b], **j, journals.READ_WHOLE: True} for b, j in emptied.items()}


def _copies_made(journal_of: dict[str, dict]) -> None:
    """Copy, of the orders these journals move, what tomorrow's copies still need as they are
    now (`day_copies.copies_before_fold`), on each board whose tomorrow is begun and not
    copied: before the fold changes them. Made again by a fold done again, it changes nothing."""
    for board, journal in journal_of.items():
        if (day := day_copies.copy_due(journal)) is not None:
            parts = (journals.part_order(key) for key, part in journal.get("p", {}).items() if part)
            changed = [scope for day_key, scope in parts if day_key == str(day - 1)]
            day_copies.copies_before_fold(board, day, changed)


def group_moves(
    journal_of: dict[str, dict],
    bases: dict[str, sets.Manifest],
    by_part: dict[str, dict[tuple[str, str], list[moving.Move]]],
) -> dict[str, dict[tuple[str, str], list[moving.Move]]]:
    """{board: {(day, ranklist scope): moves}}: every group whose order of a day this batch moves
    leaves the record its histogram gave before the batch for the one it gives after (see
    `groups`). Both histograms are the manifest's with the journal's part laid over it (its
    histogram change ``h``, read with the pairs of the programmers moved), before and after
    this batch's moves, as a reader would see them; so each ranklist holds, for every group, the
    record of the histogram readers see, and a batch moves it from there."""
    moves: dict[str, dict[tuple[str, str], list[moving.Move]]] = {}
    for board, parts in by_part.items():
        journal = journal_of[board]
        epoch, packed = journal.get("epoch", 0), journal.get("p", {})
        for (day_key, scope), member_moves in parts.items():
            kind = groups.kind_of(scope)
            if kind is None:
                continue
            base = bases[orders.order_id(board, day_key, scope)]
            key = journals.part_key(day_key, scope)
            before = journals.part_pairs(packed.get(key, {}))
            after = dict(before)
            for move in member_moves:
                journals.journal_move(after, move)
            if base.shift:  # a histogram of buckets: the records from the order itself
                old, new = reading.group_records_moved(board, day_key, scope, epoch, before, after)
            else:
                change = journals.change_read(journal.get("h", {}).get(key, {}))
                old = groups.record(scope, histogram_laid(base, epoch, change))
                change.update(journals.pairs_histogram(after.values()))
                change.subtract(journals.pairs_histogram(before.values()))
                new = groups.record(scope, histogram_laid(base, epoch, change))
            if old != new:
                place = (day_key, groups.ranklist_scope(kind))
                moves.setdefault(board, {}).setdefault(place, []).append(moving.Move(old, new))
    return moves


def histogram_laid(base: sets.Manifest, epoch: int, change: Mapping[int, int]) -> dict[int, int]:
    """The histogram of a manifest read for its histogram only, with the change a journal's part
    of that epoch makes laid over it unless it holds that epoch already (as `reading` does, a
    count never below zero)."""
    if base.folded >= epoch:
        return dict(base.histogram)
    laid = Counter(base.histogram)
    laid.update(change)
    return {score: count for score, count in laid.items() if count > 0}

"""The journal of each board: the moves of a solve, recorded in one document, folded in bulk.

**Journals** (``<board>|journal`` in ``orders``): a solve moves its programmer in every order of
every day it touches (38 days on the three default boards, twice with a group), and writing
dozens of manifests is what a solve would cost, each some 80 KB at a million programmers. So a
solve records its moves in one document per board instead: for each order, each programmer's
pair (the record the manifest holds, the record they hold now). A programmer moving again
replaces their pair, so a journal grows with the programmers who moved, not with their solves.
Once a journal holds JOURNAL_MAX programmers' pairs, the batch that filled it folds it into the
manifests and sets and empties it in a new **epoch**; each manifest records the epoch it holds
(``folded``).

**Group ranklists** (scope ``groups:country`` or ``groups:org`` of each board day): the groups
themselves ranked against each other, one record a group computed from its own order's
histogram (see `groups`), kept as an order like the others. The batch that moves programmers
reads, with the journals, the histograms of the groups' orders it moves, and records in the same
journal write each group's move from the record of its histogram before the batch to the one
after (`group_moves`); folds, pages and prunes then treat them as any order. A group's scope is
kept by its id in ``group_names`` (see `orders`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bson import Binary

from . import days_kept, groups, lease, maths, moving, order_documents, orders, sets

# Programmers' moves a board's journal holds before they are folded into orders. The moves of the
# groups in the ranklists ride along uncounted: a programmer with g groups makes 38 (1 + g) moves
# on the default boards and at most 38 g of groups, so they add at most 2/3 to a journal, and
# counting them would fold half as often again, each fold rewriting the same big manifests.
JOURNAL_MAX = 1024
_PAIR_WIDTH = 1 + 2 * sets.RECORD_BYTES  # which of the two is there, then gone and came


def journal_id(board_slug: str) -> str:
    """The `_id` of a board's journal, in the manifests' collection (after every day's name, so
    `orders.orders_prune` leaves it)."""
    return f"{board_slug}|journal"


def _part_key(day_key: str, scope: str) -> str:
    """The journal field of one board day's order: the scope in hex, as a group's name is free
    text (an organization) and must never become a field path of its own."""
    return f"{day_key}_{scope.encode().hex()}"


def _part_order(key: str) -> tuple[str, str]:
    day_key, scope = key.split("_")
    return day_key, bytes.fromhex(scope).decode()


def _part_unpack(packed: bytes) -> dict[int, tuple[bytes | None, bytes | None]]:
    """{programmer id: (the record the manifest holds or None, the one they moved to or None)}."""
    part, width = {}, sets.RECORD_BYTES
    for i in range(0, len(packed), _PAIR_WIDTH):
        there, gone, came = (
            packed[i],
            packed[i + 1 : i + 1 + width],
            packed[i + 1 + width : i + _PAIR_WIDTH],
        )
        pair = (gone if there & 1 else None, came if there & 2 else None)
        part[sets.record_programmer(pair[0] or pair[1])] = pair
    return part


def _part_pack(part: dict[int, tuple[bytes | None, bytes | None]]) -> Binary:
    blank = bytes(sets.RECORD_BYTES)
    return Binary(
        b"".join(
            bytes([(gone is not None) | (came is not None) << 1])
            + (gone or blank)
            + (came or blank)
            for gone, came in part.values()
        )
    )


def journal_part(board_slug: str, day_key: str, scope: str) -> tuple[int, list, int | None]:
    """(the journal's epoch, the (gone, came) pairs of one board day's order, the board's
    frontier: None before its first batch): one `_id` read of that part only."""
    key = _part_key(day_key, scope)
    document = orders.orders().find_one(
        {"_id": journal_id(board_slug)}, {"epoch": 1, f"p.{key}": 1, "frontier": 1}
    )
    if document is None:
        return 0, [], None
    pairs = list(_part_unpack(document.get("p", {}).get(key, b"")).values())
    return document.get("epoch", 0), pairs, document.get("frontier")


def _journal_move(part: dict, move: moving.Move) -> None:
    """Record a move in a part: a programmer keeps the record the manifest held before the part
    began (`gone`) and takes the new one, so moving again, or the same move twice, leaves one
    pair; moving back to what the manifest holds leaves none."""
    pid = sets.record_programmer(move.old if move.old is not None else move.new)
    gone = part[pid][0] if pid in part else move.old
    if gone == move.new:
        part.pop(pid, None)
    else:
        part[pid] = (gone, move.new)


def journal_append(journal: dict, parts: dict[tuple[str, str], list[moving.Move]]) -> dict:
    """A journal with these moves recorded (the next version, to compare-and-swap)."""
    packed = dict(journal.get("p", {}))
    for (day_key, scope), moves in parts.items():
        key = _part_key(day_key, scope)
        part = _part_unpack(packed.get(key, b""))
        for move in moves:
            _journal_move(part, move)
        packed[key] = _part_pack(part)
    return {
        **_kept(journal),
        "v": journal.get("v", 0) + 1,
        "epoch": journal.get("epoch", 0),
        "folding": False,
        "n": sum(
            len(p) // _PAIR_WIDTH
            for key, p in packed.items()
            if not groups.is_ranklist(_part_order(key)[1])
        ),
        "p": packed,
    }


def _kept(journal: dict) -> dict:
    """What a journal keeps through every write and fold: the board's frontier (the last day
    whose orders are kept, see `day_change`), how far the preparation of the next has got, and
    the board's window (which days a solve counts on)."""
    return {name: journal[name] for name in _KEPT if name in journal}


_KEPT = ("frontier", "prep", "window")
_JOURNAL = {"v": 1, "epoch": 1, "folding": 1, "n": 1, "p": 1, **dict.fromkeys(_KEPT, 1)}


@dataclass(frozen=True)
class Head:
    """What a batch reads of a board's journal before anything else: its version, the board's
    frontier (None before its first batch) and the window it keeps (see `day_change`)."""

    version: int = 0
    frontier: int | None = None
    window: dict | None = None


def journal_heads(boards: Iterable[str]) -> dict[str, Head]:
    """{board: its journal's `Head`}: one read of the versions, frontiers and windows alone,
    which a batch takes before the entries (see `applier`)."""
    wanted = {journal_id(board): board for board in boards}
    fields = {"v": 1, "frontier": 1, "window": 1}
    found = {
        doc["_id"]: Head(doc.get("v", 0), doc.get("frontier"), doc.get("window"))
        for doc in orders.orders().find(
            {"_id": {"$in": list(wanted)}}, fields, batch_size=len(wanted) + 1
        )
    }
    return {board: found.get(journal, Head()) for journal, board in wanted.items()}


def journals_read(
    boards: Iterable[str], ranked: Iterable[str] = ()
) -> tuple[dict[str, dict], dict[str, sets.Manifest]]:
    """The journals of these boards (empty for one never written), and the histograms of the
    manifests `ranked` (groups' orders, whose ranklists the batch moves), in the same reads: one
    for a batch that moves nobody with a group, else `$in` reads of at most IN_MAX ids (the
    embedded server's `$in` costs the square of its ids). The two kinds of document share the
    collection and no field but `v`."""
    wanted = {journal_id(board): board for board in boards}
    ids = [*wanted, *ranked]
    found: dict[str, dict] = {}
    for start in range(0, len(ids), orders.IN_MAX):
        part = ids[start : start + orders.IN_MAX]
        fields = {**_JOURNAL, **order_documents.HISTOGRAM, "folded": 1}
        # One batch each: the server leaves a cursor open when a batch ends exactly at its size.
        found |= {
            doc["_id"]: doc
            for doc in orders.orders().find(
                {"_id": {"$in": part}}, fields, batch_size=len(part) + 1
            )
        }
    journals = {board: found.get(journal_id, {}) for journal_id, board in wanted.items()}
    return journals, {order: order_documents.manifest_decode(found.get(order)) for order in ranked}


def journal_read(board_slug: str) -> dict:
    """A board's whole journal ({} for one never written): one `_id` read."""
    return orders.orders().find_one({"_id": journal_id(board_slug)}, _JOURNAL) or {}


def journal_write(board_slug: str, journal: dict, changes: dict) -> dict:
    """Write a journal with these fields changed (None: removed), over the version it had
    (compare-and-swap); returns it as written."""
    after = {name: value for name, value in {**journal, **changes}.items() if value is not None}
    after = {**after, "v": journal.get("v", 0) + 1}
    journals_swap({board_slug: journal}, {board_slug: after})
    return after


def moves_record(
    board_slug: str,
    journal: dict,
    by_part: dict[tuple[str, str], list[moving.Move]],
    changes: dict,
) -> dict:
    """Record these moves of one board in its journal, with the moves of the groups whose scores
    they change in the ranklists (`group_moves`), and these fields changed, in one write
    (compare-and-swap); fold it when full. Returns the journal as it is then."""
    ranked = [
        orders.order_id(board_slug, day_key, scope)
        for day_key, scope in by_part
        if groups.kind_of(scope)
    ]
    bases = journals_read((), ranked)[1]
    moves = {board_slug: dict(by_part)}
    for board, parts in group_moves({board_slug: journal}, bases, moves).items():
        moves[board].update(parts)
    appended = journal_append(journal, moves[board_slug]) | changes
    journals_swap({board_slug: journal}, {board_slug: appended})
    if appended["n"] > JOURNAL_MAX:
        return journals_fold({board_slug: appended})[board_slug]
    return appended


def journals_swap(before: dict[str, dict], after: dict[str, dict]) -> None:
    """Write the journals `after`, each over the version it had `before` (compare-and-swap, in
    one bulk with `orders.manifests_swap`)."""
    if after:
        orders.manifests_swap(_swaps(before, after))


def journals_swap_writes(before: dict[str, dict], after: dict[str, dict]) -> list:
    """`journals_swap` as writes to send first among a batch's others (`mongo.write_together`)."""
    return orders.manifests_swap_writes(_swaps(before, after))


def _swaps(before: dict[str, dict], after: dict[str, dict]) -> list[tuple[str, int, dict]]:
    return [
        (journal_id(board), before[board].get("v", 0), {k: v for k, v in j.items() if k != "_id"})
        for board, j in after.items()
    ]


def _part_moves(packed: bytes) -> list[moving.Move]:
    """The moves that fold a journal's part into its order: each programmer out of the record
    the manifest holds and into their new one."""
    moves = []
    for gone, came in _part_unpack(packed).values():
        moves += [moving.Move(gone, None)] if gone is not None else []
        moves += [moving.Move(None, came)] if came is not None else []
    return moves


def journals_fold(journals: dict[str, dict]) -> dict[str, dict]:
    """Move the journals' moves into the orders (`orders.manifests_move`: exact, as it reads the
    sets a member leaves) and empty them in a new epoch; returns them emptied. A journal is marked
    as folding first, so that nobody adds to it until it is emptied (a manifest that already
    holds its epoch ignores its part, so it would ignore anything added there too) and the next
    batch finishes a fold that stopped midway: it moves the same members from the same manifests
    (sets the stopped fold wrote are repaired into them as they are read, `manifest_repair`), so
    each is held once."""
    marked = {
        board: {**journal, "v": journal["v"] + 1, "folding": True}
        for board, journal in journals.items()
        if not journal.get("folding")
    }
    journals_swap(journals, marked)
    lease.keep()  # a fold reads and writes many sets
    oldest = days_kept.history_from(days_kept.current_day())
    folding = {}
    for board, journal in journals.items():
        for key, packed in journal.get("p", {}).items():
            day_key, scope = _part_order(key)
            if day_key == maths.ALL_TIME_KEY or int(day_key) >= oldest:  # else pruned
                moves = _part_moves(packed)
                folding[orders.order_id(board, day_key, scope)] = (journal.get("epoch", 0), moves)
    orders.manifests_move(folding, {board: j.get("frontier") for board, j in journals.items()})
    current = {**journals, **marked}
    emptied = {
        board: {
            **_kept(j),
            **{"v": j["v"] + 1, "epoch": j.get("epoch", 0) + 1, "folding": False, "n": 0, "p": {}},
        }
        for board, j in current.items()
    }
    journals_swap(current, emptied)
    return emptied


# --- group ranklists ---------------------------------------------------------------------------


def group_moves(
    journals: dict[str, dict],
    bases: dict[str, sets.Manifest],
    by_part: dict[str, dict[tuple[str, str], list[moving.Move]]],
) -> dict[str, dict[tuple[str, str], list[moving.Move]]]:
    """{board: {(day, ranklist scope): moves}}: every group whose order of a day this batch moves
    leaves the record its histogram gave before the batch for the one it gives after (see
    `groups`). Both histograms are the manifest's with the journal's part laid over it, before
    and after this batch's moves, as a reader would see them; so each ranklist holds, for every
    group, the record of the histogram readers see, and a batch moves it from there."""
    moves: dict[str, dict[tuple[str, str], list[moving.Move]]] = {}
    for board, parts in by_part.items():
        journal = journals[board]
        epoch, packed = journal.get("epoch", 0), journal.get("p", {})
        for (day_key, scope), member_moves in parts.items():
            kind = groups.kind_of(scope)
            if kind is None:
                continue
            base = bases[orders.order_id(board, day_key, scope)]
            before = _part_unpack(packed.get(_part_key(day_key, scope), b""))
            after = dict(before)
            for move in member_moves:
                _journal_move(after, move)
            old = _record_laid(board, day_key, scope, base, epoch, before.values())
            new = _record_laid(board, day_key, scope, base, epoch, after.values())
            if old != new:
                place = (day_key, groups.ranklist_scope(kind))
                moves.setdefault(board, {}).setdefault(place, []).append(moving.Move(old, new))
    return moves


def _record_laid(
    board: str, day_key: str, scope: str, base: sets.Manifest, epoch: int, pairs: Iterable
) -> bytes | None:
    """A group's record from its histogram with these pairs laid over it; from its order read
    with them laid when the histogram counts buckets (`reading.group_record`)."""
    if base.shift:
        from . import reading  # imported here: `reading` reads the journals

        return reading.group_record(board, day_key, scope, laid=(epoch, list(pairs)))
    return groups.record(scope, _histogram_laid(base, epoch, pairs))


def _histogram_laid(base: sets.Manifest, epoch: int, pairs: Iterable) -> dict[int, int]:
    """The histogram of a manifest read for its histogram only, with a journal's part of that
    epoch laid over it unless it holds that epoch already (as `reading` does)."""
    manifest = sets.Manifest(histogram=base.histogram, lasts=None)
    if base.folded < epoch:
        manifest.journal_lay(pairs)
    return manifest.histogram

"""The journal of each board: the moves of a solve, recorded pair by pair, folded in bulk.

**Journals** (``<board>|journal`` in ``orders``): rather than write the manifests of every order it
moves its programmer in, a solve records its moves in one document per board: for each order (a
**part**, ``p.<part key>``), each programmer's pair (the record the manifest holds, the record they
hold now), one field a programmer (``p.<part key>.<programmer id>``). A programmer moving again
replaces their pair, so a journal grows with the programmers who moved, not with their solves. Once
a journal holds JOURNAL_MAX programmers' pairs (``n``), the batch that filled it folds it into the
manifests and sets and empties it in a new **epoch** (`folds`); each manifest records the epoch
it holds (``folded``).

**A batch reads and writes what it changes.** A batch reads of each journal its head (version,
epoch, ``n``, frontier) and only the pairs of the programmers it moves (a projection of their
fields), and writes one update: the pairs changed (``$set``, ``$unset`` of a pair that moving back
left empty) with ``$inc`` of ``n``, compare-and-swapped on the version ``v`` like every journal
write (`_swap`: an upsert, so a version gone meets a duplicate key and stops the ordered bulk it
leads, see `applier._batch_write`). So a solve's bytes do not grow with what the journal holds: on
a replica set only the changed pairs go through the oplog. Readers read the one part they lay over
the root (`journal_part`); folds and the day change read the journal whole.

"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bson import Binary
from pymongo import UpdateOne
from pymongo.errors import BulkWriteError

from .. import mongo
from . import encoding, groups, moving, order_documents, orders, sets

# Programmers' moves a journal holds before it is folded. The groups' moves in the ranklists ride
# along uncounted (at most g of them for a programmer's 1 + g): counting them would fold as often
# again, each fold rewriting the same big manifests.
JOURNAL_MAX = 1024
_PAIR_WIDTH = 1 + 2 * encoding.RECORD_BYTES  # which of the two is there, then gone and came
# The journal fields a batch reads and writes by name at most (a solve: a few dozen); past it, it
# reads the journals whole and sets their parts whole: the embedded server's projection and
# dotted `$set` cost the square of their fields (docs/decisions/0004).
PROJECTED_MAX = 64
READ_WHOLE = "read whole"  # in memory only: marks a journal read whole (no field has a space)

Pair = tuple[bytes | None, bytes | None]
Parts = Mapping[tuple[str, str], list[moving.Move]]


def journal_id(board_slug: str) -> str:
    """The `_id` of a board's journal, in the manifests' collection (after every day's name, so
    `orders.orders_prune` leaves it)."""
    return f"{board_slug}|journal"


def part_key(day_key: str, scope: str) -> str:
    """The journal field of one board day's order: the scope in hex, as a group's name is free
    text (an organization) and must never become a field path of its own; the day is a number
    or ``all``, never user text (checked, as the key becomes a field path)."""
    if not day_key.isalnum():
        raise ValueError(f"not a day key: {day_key!r}")
    return f"{day_key}_{scope.encode().hex()}"


def part_order(key: str) -> tuple[str, str]:
    day_key, scope = key.split("_")
    return day_key, bytes.fromhex(scope).decode()


def _pair_field(key: str, programmer: int) -> str:
    """The field of one programmer's pair in a part (a group's, in a ranklist's part): the part
    key is hex and digits, the id an integer, so neither can add a level or an operator."""
    if type(programmer) is not int:
        raise TypeError(f"not a programmer id: {programmer!r}")
    return f"p.{key}.{programmer}"


def _pair_unpack(packed: bytes) -> Pair:
    """(the record the manifest holds or None, the one the programmer moved to or None)."""
    width = encoding.RECORD_BYTES
    there, gone, came = packed[0], packed[1 : 1 + width], packed[1 + width :]
    return (gone if there & 1 else None, came if there & 2 else None)


def _pair_pack(pair: Pair) -> Binary:
    gone, came = pair
    there = bytes([(gone is not None) | (came is not None) << 1])
    blank = bytes(encoding.RECORD_BYTES)
    return Binary(there + (gone or blank) + (came or blank))


def part_pairs(part: Mapping[str, bytes] | bytes) -> dict[int, Pair]:
    """{programmer id: pair} of a part as stored (or as much of it as was read); a part of the
    layout before (all its pairs packed in one binary) is read too, by folds and readers."""
    if isinstance(part, bytes):
        pairs = (_pair_unpack(part[i : i + _PAIR_WIDTH]) for i in range(0, len(part), _PAIR_WIDTH))
        return {encoding.record_programmer(gone or came): (gone, came) for gone, came in pairs}
    return {int(programmer): _pair_unpack(packed) for programmer, packed in part.items()}


def journal_part(board_slug: str, day_key: str, scope: str) -> tuple[int, list, int | None]:
    """(the journal's epoch, the (gone, came) pairs of one board day's order, the board's
    frontier: None before its first batch): one `_id` read of that part only."""
    key = part_key(day_key, scope)
    document = orders.orders().find_one(
        {"_id": journal_id(board_slug)}, {"epoch": 1, f"p.{key}": 1, "frontier": 1}
    )
    if document is None:
        return 0, [], None
    pairs = list(part_pairs(document.get("p", {}).get(key, {})).values())
    return document.get("epoch", 0), pairs, document.get("frontier")


def journal_move(part: dict, move: moving.Move) -> None:
    """Record a move in a part: a programmer keeps the record the manifest held before the part
    began (`gone`) and takes the new one, so moving again, or the same move twice, leaves one
    pair; moving back to what the manifest holds leaves none."""
    pid = encoding.record_programmer(move.old if move.old is not None else move.new)
    gone = part[pid][0] if pid in part else move.old
    if gone == move.new:
        part.pop(pid, None)
    else:
        part[pid] = (gone, move.new)


def pairs_histogram(pairs: Iterable[Pair]) -> Counter:
    """{score: change of its count} that pairs make of a histogram (see `sets.Manifest
    .journal_lay`): each takes one out of the score it leaves and adds one to the one it takes."""
    change: Counter = Counter()
    for gone, came in pairs:
        if gone is not None:
            change[encoding.record_score(gone)] -= 1
        if came is not None:
            change[encoding.record_score(came)] += 1
    return change


@dataclass
class Append:
    """A batch's moves of one board as one compare-and-swap update of its journal (`swap`) and
    the journal as it reads after it (`journal`: the head, the pairs read and changed)."""

    board: str
    expected: int
    journal: dict
    to_set: dict = field(default_factory=dict)
    to_unset: dict = field(default_factory=dict)
    to_inc: dict = field(default_factory=dict)

    def swap(self) -> tuple[str, int, dict]:
        """(board, the version it expects, the update), for `journals_swap` or `_swap`."""
        update = {"$set": {**self.to_set, "v": self.journal["v"]}}
        update |= {"$unset": self.to_unset} if self.to_unset else {}
        update |= {"$inc": self.to_inc} if self.to_inc else {}
        return self.board, self.expected, update


def journal_append(
    journal: dict, parts: Parts, board: str = "", changes: dict | None = None
) -> Append:
    """The moves of `parts` recorded in a journal read with the pairs of the programmers they
    move (`journals_read`), and these fields changed (None: removed): the `Append` to write.
    Only a journal that is not folding and has the pairs' layout takes moves (`fold_first`)."""
    pairs = {key: dict(part) for key, part in journal.get("p", {}).items()}
    change = {key: change_read(part) for key, part in journal.get("h", {}).items()}
    after = Append(board, journal.get("v", 0), {})
    counted = 0
    for (day_key, scope), moves in parts.items():
        counted += _part_append(after, pairs, change, part_key(day_key, scope), scope, moves)
    after.to_inc |= {"n": counted} if counted else {}
    # The head again, so that a journal somebody deleted meanwhile (a rebuild) comes back whole.
    head = {"epoch": journal.get("epoch", 0), "folding": False, "layout": LAYOUT}
    after.to_set |= head
    after.journal = {**journal, **head, "n": journal.get("n", 0) + counted, "p": pairs, "h": change}
    if journal.get(READ_WHOLE):  # a batch of many: the parts whole (see `journals_read`)
        stored = {key: {str(s): by for s, by in c.items() if by} for key, c in change.items()}
        after.to_set = {**head, "n": after.journal["n"], "p": pairs, "h": stored}
        after.to_unset, after.to_inc = {}, {}
    _changes_lay(after, changes or {})
    return after


def _part_append(
    after: Append, pairs: dict, change: dict, key: str, scope: str, moves: list[moving.Move]
) -> int:
    """Record moves in the part `key` of a journal being appended to: each pair that changes is
    set (or unset, left empty) in `after` and in `pairs` (the parts as stored), and for a group's
    order the change the pairs make of its histogram goes to `after` and `change` too. Returns
    how many programmers' pairs the part gained (a ranklist's are not counted)."""
    part = part_pairs(pairs.get(key, {}))
    before = dict(part)
    for move in moves:
        journal_move(part, move)
    for pid in {*before, *part}:
        if before.get(pid) == part.get(pid):
            continue
        name = _pair_field(key, pid)
        if pid in part:
            after.to_set[name] = packed = _pair_pack(part[pid])
            pairs.setdefault(key, {})[str(pid)] = packed
        else:
            after.to_unset[name] = ""
            pairs.get(key, {}).pop(str(pid), None)
    if groups.kind_of(scope):  # what the pairs make of the histogram, for `folds.group_moves`
        moved = pairs_histogram(part.values())
        moved.subtract(pairs_histogram(before.values()))
        for score, by in moved.items():
            if by:
                after.to_inc[f"h.{key}.{int(score)}"] = by
                change.setdefault(key, Counter())[score] += by
    return 0 if groups.is_ranklist(scope) else len(part) - len(before)


def _changes_lay(after: Append, changes: dict) -> None:
    """These fields of a journal changed (None: removed), in an `Append` and the journal after."""
    for name, value in changes.items():
        if value is None:
            after.to_unset[name] = ""
            after.journal.pop(name, None)
        else:
            after.to_set[name] = after.journal[name] = value
    after.journal["v"] = after.expected + 1


def change_read(change: Mapping[str, int]) -> Counter:
    """A group part's histogram change as stored ({score as text: change}) by score."""
    return Counter({int(score): by for score, by in change.items()})


# Kept through every write and fold: the frontier, the next day's preparation, the window.
KEPT = ("frontier", "prep", "window")
_HEAD = {"v": 1, "epoch": 1, "folding": 1, "n": 1, "layout": 1, **dict.fromkeys(KEPT, 1)}
_JOURNAL = {**_HEAD, "p": 1, "h": 1}
# The journal's layout: a pair a field (2). A journal of the layout before (a part a packed
# binary, which no projection can take apart) is folded before it takes any move (`fold_first`).
LAYOUT = 2


def fold_first(journal: dict) -> bool:
    """Whether a journal must be folded before a batch adds to it: a fold stopped midway, or a
    journal of the layout before this one (written whole, never folded since)."""
    return bool(journal.get("folding")) or (
        journal.get("v", 0) > 0 and journal.get("layout") != LAYOUT
    )


@dataclass(frozen=True)
class Head:
    """What a batch reads first of a journal: its version, frontier (or None), window, and the
    next day's preparation under way (`day_change`: None, or its day, epoch, id, and whether
    its pass is done)."""

    version: int = 0
    frontier: int | None = None
    window: dict | None = None
    prep: dict | None = None


def frontier_exclusive(journal: Mapping) -> int | None:
    """The day whose own documents a board's orders may change in place (`order_writes`): the
    frontier, or the day being prepared once its orders are copies sharing the frontier's
    documents (`day_change`), so that nothing changes what the copies list."""
    prep = journal.get("prep") or {}
    return prep["day"] if prep.get("day") else journal.get("frontier")


def journal_heads(boards: Iterable[str]) -> dict[str, Head]:
    """{board: its journal's `Head`}: one read of the versions, frontiers and windows alone,
    which a batch takes before the entries (see `applier`)."""
    wanted = {journal_id(board): board for board in boards}
    fields = {"v": 1, "frontier": 1, "window": 1, "prep": 1}
    found = {
        doc["_id"]: Head(doc.get("v", 0), doc.get("frontier"), doc.get("window"), doc.get("prep"))
        for doc in orders.orders().find(
            {"_id": {"$in": list(wanted)}}, fields, batch_size=len(wanted) + 1
        )
    }
    return {board: found.get(journal, Head()) for journal, board in wanted.items()}


def _fields_moved(by_part: Mapping[str, Parts]) -> dict[str, int] | None:
    """The journal fields a batch moving `by_part` reads: the pair of each programmer it moves
    in each part, each group's pair in its ranklist's part, and each group part's histogram
    change (one projection serves every board's journal: a pair asked for on one board and not
    moved there is read and left alone). None past PROJECTED_MAX fields (see `journals_read`)."""
    wanted: dict[str, int] = {}
    for parts in by_part.values():
        for (day_key, scope), moves in parts.items():
            key = part_key(day_key, scope)
            for move in moves:
                pid = encoding.record_programmer(move.old if move.old is not None else move.new)
                wanted[_pair_field(key, pid)] = 1
            if kind := groups.kind_of(scope):
                ranklist = part_key(day_key, groups.ranklist_scope(kind))
                wanted[_pair_field(ranklist, groups.group_id(scope))] = wanted[f"h.{key}"] = 1
    return wanted if len(wanted) <= PROJECTED_MAX else None


def journals_read(
    by_part: Mapping[str, Parts], ranked: Iterable[str] = ()
) -> tuple[dict[str, dict], dict[str, sets.Manifest]]:
    """The journals of the boards of `by_part` (empty for one never written), each with its head
    and only what the moves change (`_fields_moved`), and the histograms of the manifests
    `ranked` (groups' orders, whose ranklists the batch moves), in the same reads: one for a
    batch that moves nobody with a group, else `$in` reads of at most IN_MAX ids (the embedded
    server's `$in` costs the square of its ids). The two kinds of document share the collection
    and no field but `v`. A batch of many programmers (past PROJECTED_MAX fields: catching up,
    a day's preparation) reads its journals whole instead, apart from the histograms: the
    embedded server's projection costs about the square of its fields, on every document."""
    wanted = {journal_id(board): board for board in by_part}
    histogram = {**order_documents.HISTOGRAM, "folded": 1}
    moved = _fields_moved(by_part)
    if moved is None:
        reads = [(list(wanted), _JOURNAL), (list(ranked), histogram)]
    else:
        reads = [([*wanted, *ranked], {**_HEAD, **moved, **histogram})]
    found: dict[str, dict] = {}
    for ids, fields in reads:
        for start in range(0, len(ids), orders.IN_MAX):
            part = ids[start : start + orders.IN_MAX]
            # One batch each: the server leaves a cursor open when a batch ends exactly there.
            found |= {
                doc["_id"]: doc
                for doc in orders.orders().find(
                    {"_id": {"$in": part}}, fields, batch_size=len(part) + 1
                )
            }
    journals = {board: found.get(journal_id, {}) for journal_id, board in wanted.items()}
    if moved is None:
        journals = {board: {**journal, READ_WHOLE: True} for board, journal in journals.items()}
    return journals, {order: order_documents.manifest_decode(found.get(order)) for order in ranked}


def journal_read(board_slug: str) -> dict:
    """A board's whole journal ({} for one never written): one `_id` read."""
    return orders.orders().find_one({"_id": journal_id(board_slug)}, _JOURNAL) or {}


def journals_whole(journals: Mapping[str, dict]) -> dict[str, dict]:
    """These journals read whole again (one `$in` read), which must still have the versions
    given (else `orders.OrdersConflict`): a batch holds only the pairs it moved."""
    wanted = {journal_id(board): board for board in journals}
    found = {doc["_id"]: doc for doc in mongo.find_by_ids(orders.orders(), list(wanted), _JOURNAL)}
    whole = {board: found.get(journal, {}) for journal, board in wanted.items()}
    if any(whole[board].get("v", 0) != journals[board].get("v", 0) for board in whole):
        raise orders.OrdersConflict("a journal changed since it was written")
    return whole


def journal_write(board_slug: str, journal: dict, changes: dict) -> dict:
    """Write these fields of a journal changed (None: removed), over the version it had
    (compare-and-swap); returns it as written. Nothing else is touched (a fold under way stays
    under way)."""
    append = Append(board_slug, journal.get("v", 0), dict(journal))
    append.to_set |= {} if append.expected else {"layout": LAYOUT}  # a journal created
    _changes_lay(append, changes)
    journals_swap([append.swap()])
    return append.journal


def _swap(board: str, expected: int, update: dict, *, together: bool = True) -> UpdateOne:
    """A journal's compare-and-swap on its version: an upsert, so a version gone meets a
    duplicate key (`mongo.write_together` stops there) instead of changing nothing unnoticed.
    `together`: naming its collection, to send among a batch's other writes."""
    where = {"namespace": mongo.namespace(orders.orders())} if together else {}
    return UpdateOne({"_id": journal_id(board), "v": expected}, update, upsert=True, **where)


def journals_swap(swaps: list[tuple[str, int, dict]]) -> None:
    """Journals' compare-and-swaps alone ([(board, the version it expects, the update)]), in
    one bulk; one whose version is gone (only an applier that outlived its lease changes it) is
    an `orders.OrdersConflict`."""
    writes = [_swap(*swap, together=False) for swap in swaps]
    try:
        orders.orders().bulk_write(writes, ordered=True)
    except BulkWriteError as error:
        raise mongo.conflict_or_fault(
            error, orders.OrdersConflict, "a journal changed since it was read"
        ) from error


def journals_append_writes(appends: Iterable[Append]) -> list:
    """The batch's `Append`s as writes to send first among its others (`mongo.write_together`)."""
    return [_swap(*append.swap()) for append in appends]

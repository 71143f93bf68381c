"""Moving members through the sets of a manifest: the write path of `sets`, in memory.

A batch of moves (a programmer out of one record and into another) changes a manifest and the
sets it lists (`moves_apply`): a member joining a set waits among the manifest's **arrivals**
(counted in its set's entry, not yet written into it) until a set holds many of them, when one
write takes them all in; a member leaving one is taken out of the manifest's arrivals, or out
of the set when the batch writes it anyway, or else is only listed among the set's **gone**
records: one small write beside the set's records, which readers leave out, without reading or
rewriting the set (a solve's members leave from anywhere in the order, so rewriting each set
left was most of a fold's bytes). A set is read and rewritten when it takes its arrivals in, or
when its gone records would pass sets.GONE_MAX (`sets_plan` says which sets a batch reads whole
and which it leaves by a gone list). A set past SET_MAX is cut in two new sets; an empty one
is dropped.

A record is removed only if it is there and inserted only if it is not, so the same moves
applied twice change nothing, and a set whose gone list was written but not its manifest (a
writer stopped between the two) is recomputed from the set as it is (`manifest_repair`). How a
set changed is written back, never over its document, is `rewrites`. `sets_build` makes a
manifest and its sets from records already sorted (rebuilds and bulk loads).

Pure, like `sets`: `orders` reads and `order_writes` writes what it changes.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from . import rewrites, sets
from .encoding import record_score, records_of, separator
from .sets import Manifest, SetInfo


@dataclass(frozen=True)
class Move:
    """One programmer's change on a board day: out of `old` and into `new` (None: not there)."""

    old: bytes | None
    new: bytes | None


def sets_left(manifest: Manifest, moves: Iterable[Move]) -> Counter[int]:
    """{set id: members of it the moves take out}: members written in the set, not among the
    manifest's arrivals. A writer reads those sets' versions and gone counts only, and reads the
    sets whole when the counts would pass sets.GONE_MAX (or the versions disagree)."""
    if not len(manifest):
        return Counter()
    return Counter(
        manifest.set_id(manifest.set_for(move.old))
        for move in moves
        if move.old is not None and move.old not in manifest.arrivals
    )


def sets_reached(manifest: Manifest, moves: list[Move]) -> set[int]:
    """The ids of every set a batch of moves may read or write: those taking their arrivals in
    and those members leave (a writer checks their versions before it plans, see `order_writes`)."""
    return sets_to_fold(manifest, moves) | set(sets_left(manifest, moves))


def sets_plan(
    manifest: Manifest,
    moves: list[Move],
    gone_counts: Mapping[int, int] | None,
    shared: set[int] = frozenset(),
) -> tuple[set[int], set[int], set[int]]:
    """(the ids of the sets a batch of moves reads whole, those of them that take their arrivals
    in, the sets members leave by a gone list): `gone_counts` gives, for each set members leave,
    how many gone records its document lists already (None: list none, and read whole every set
    a member leaves or joins, the writer being unsure of what the sets hold, see `order_writes`: a
    member is then taken out only if it is there and put in only if it is not). `shared`: sets
    that other roots list too, which members never leave by a gone list (read whole instead)."""
    fold = sets_to_fold(manifest, moves)
    left = sets_left(manifest, moves)
    if gone_counts is None:
        return fold | set(left) | _sets_joined(manifest, moves), fold, set()
    full = {s for s, n in left.items() if gone_counts.get(s, 0) + n > sets.GONE_MAX or s in shared}
    return fold | full, fold, set(left) - fold - full


def _sets_joined(manifest: Manifest, moves: Iterable[Move]) -> set[int]:
    """The ids of the sets members join (none in an empty manifest: a join makes its set)."""
    if not len(manifest):
        return set()
    return {manifest.set_id(manifest.set_for(m.new)) for m in moves if m.new is not None}


def sets_to_fold(manifest: Manifest, moves: Iterable[Move]) -> set[int]:
    """The ids of the sets that take their arrivals in (read whole and written): when the
    arrivals would pass sets.ARRIVALS_MAX, the sets holding the most of them, until half that is
    left. (Sets that members only leave are `sets_left`.)"""
    if not len(manifest):
        return set()
    arrivals = {record: manifest.set_for(record) for record in manifest.arrivals}
    for move in moves:
        if move.old is not None:
            arrivals.pop(move.old, None)
        if move.new is not None:
            arrivals[move.new] = manifest.set_for(move.new)
    fold: set[int] = set()
    if len(arrivals) > sets.ARRIVALS_MAX:
        left = len(arrivals)
        for index, count in Counter(arrivals.values()).most_common():
            fold.add(index)
            left -= count
            if left <= sets.ARRIVALS_MAX // 2:
                break
    return {manifest.set_id(index) for index in fold}


def moves_apply(
    manifest: Manifest,
    loaded: dict[int, bytes],
    moves: list[Move],
    fold: set[int] = frozenset(),
    leaving: set[int] = frozenset(),
) -> rewrites.Rewrite:
    """Apply moves to the manifest (in place, with its score counts read) and to the sets it lists.

    `loaded`: set id -> records blob of every set read whole (see `sets_plan`, and the inline
    one); `fold`: those that take their arrivals in; `leaving`: sets that members leave by a gone
    list. A member leaving a set leaves its arrivals, or the set if it was read (and is
    written), or else is listed as gone beside the set's records; a member joining one joins
    the manifest's arrivals, unless the set takes them in (folded, new, or kept inside the
    manifest). So most moves write the manifest and small lists of gone records; a set's
    arrivals are written into it together, once there are many. A record read is removed only if
    present and inserted only if absent, so the same moves applied twice change nothing (a
    writer lists a record as gone only in a set whose version it checked, see `order_writes`)."""
    changes = _SetChanges(manifest, loaded, set(fold) | set(manifest.inline), leaving)
    for move in moves:
        if move.old is not None and len(manifest):
            changes.leave(move.old)
        if move.new is not None:
            changes.join(move.new)
    for set_id in fold:  # take in the arrivals of folded sets no move touched
        if set_id in loaded:
            changes.records(manifest.set_ids().index(set_id))
    return _sets_replace(manifest, changes)


class _SetChanges:
    """The changes `moves_apply` makes to the sets, by index in the manifest, until
    `_sets_replace` puts them back."""

    def __init__(
        self, manifest: Manifest, loaded: dict[int, bytes], whole: set[int], leaving: set[int]
    ) -> None:
        self.manifest, self.loaded = manifest, loaded
        self.whole = whole  # ids of the sets that take their arrivals in besides new ones
        self.leaving = leaving  # ids of the sets members leave by a gone list
        self.members: dict[int, list[bytes]] = {}  # records, for sets written
        self.counts: dict[int, Counter[int]] = {}  # change of a set's score counts
        self.arrived: set[int] = set()  # sets whose arrivals changed
        self.gone: dict[int, list[bytes]] = {}  # records leaving sets that are not written

    def taking_in(self, index: int) -> bool:
        return self.manifest.set_id(index) in self.whole or self.manifest.set_version(index) == 0

    def records(self, index: int) -> list[bytes]:
        """A written set's records, with its arrivals once it takes them in."""
        set_id = self.manifest.set_id(index)
        if index not in self.members:
            self.members[index] = sorted(records_of(self.loaded.get(set_id, b"")))
        if self.taking_in(index):
            found = self.members[index]
            for record in self.manifest.arrivals_of(set_id):
                del self.manifest.arrivals[record]
                position = bisect.bisect_left(found, record)
                if position < len(found) and found[position] == record:
                    self.change(index, record, -1)  # counted twice, in the set and waiting
                else:
                    found.insert(position, record)
        return self.members[index]

    def change(self, index: int, record: bytes, by: int) -> None:
        self.counts.setdefault(index, Counter())[record_score(record)] += by

    def leave(self, record: bytes) -> None:
        """Take a member out of its set's arrivals, out of the set if it was read, or else list
        it as gone beside the set's records."""
        manifest = self.manifest
        index = manifest.set_for(record)
        if manifest.arrivals.pop(record, None) is not None:
            self.change(index, record, -1)
            self.arrived.add(index)
        elif manifest.set_id(index) in self.loaded or self.taking_in(index):
            found = self.records(index)
            position = bisect.bisect_left(found, record)
            if position < len(found) and found[position] == record:
                del found[position]
                self.change(index, record, -1)
        elif manifest.set_id(index) in self.leaving:
            self.gone.setdefault(index, []).append(record)
            self.change(index, record, -1)

    def join(self, record: bytes) -> None:
        """Put a member into its set, when the set takes it in, else into the arrivals; nowhere
        if it is there already. A set read whole is written with the member in it, taking its
        arrivals in as it may grow: it may hold the member already, put there by an earlier try
        of the same fold that wrote the manifest without the member among its arrivals."""
        manifest = self.manifest
        if not len(manifest):
            set_id = rewrites.new_set_id(manifest.born)
            manifest.splice(0, 0, [SetInfo(set_id, 0, 0, separator(record), {})])
        index = manifest.set_for(record)
        if self.taking_in(index):
            self._insert(index, record)
        elif record in manifest.arrivals:
            return
        elif manifest.set_id(index) in self.loaded:
            self.whole.add(manifest.set_id(index))  # written anyway: it takes its arrivals in
            self._insert(index, record)
        else:
            manifest.arrivals[record] = manifest.set_id(index)
            self.change(index, record, 1)
            self.arrived.add(index)

    def _insert(self, index: int, record: bytes) -> None:
        """Put a member into a written set unless it holds it."""
        found = self.records(index)
        position = bisect.bisect_left(found, record)
        if position == len(found) or found[position] != record:
            found.insert(position, record)
            self.change(index, record, 1)


def _sets_replace(manifest: Manifest, changes: _SetChanges) -> rewrites.Rewrite:
    """Put the changed sets back (each under a new id), split full ones into new sets and drop
    empty ones, and count the arrivals and gone records of the others, with their manifest
    entries (last first, so indexes hold)."""
    rewrite = rewrites.Rewrite()
    members = changes.members
    for index in sorted(set(members) | changes.arrived | set(changes.gone), reverse=True):
        info = manifest.info(index)
        scores = Counter(info.scores)
        scores.update(changes.counts.get(index, {}))
        scores = {score: n for score, n in scores.items() if n > 0}
        waiting = manifest.arrivals_of(info.set_id)
        records = members.get(index)
        if records is None and index in changes.gone and scores:
            entries = rewrites.entries_gone(rewrite, info, changes.gone[index], scores, waiting)
        elif records is None or (not records and waiting):
            entries = rewrites.entries_waiting(rewrite, manifest, info, records, scores, waiting)
        elif not records:
            entries = rewrites.entries_dropped(rewrite, info)
        elif len(records) <= sets.SET_MAX:
            entries = rewrites.entries_rewritten(rewrite, manifest, info, records, scores, waiting)
        else:
            entries = rewrites.entries_split(rewrite, manifest, info, records)
        manifest.splice(index, 1, entries)
    return rewrite


def sets_build(
    ordered: Iterable[bytes], fill: int | None = None, born: int = 0
) -> tuple[Manifest, rewrites.Rewrite]:
    """A manifest and its sets from records already in listing order (rebuilds, bulk loads),
    `fill` members a set (sets.SET_FILL), born on day `born` (see `rewrites.new_set_id`)."""
    fill = fill or sets.SET_FILL
    manifest, rewrite, chunk, infos = Manifest(version=1, born=born), rewrites.Rewrite(), [], []

    def flush() -> None:
        set_id = rewrites.new_set_id(born)
        rewrite.written[set_id] = (1, b"".join(chunk))
        infos.append(SetInfo.of(set_id, 1, chunk))
        chunk.clear()

    for record in ordered:
        if len(chunk) >= fill and separator(chunk[-1]) != separator(record):
            flush()
        chunk.append(record)
    if chunk:
        flush()
    manifest.splice(0, 0, infos)
    return manifest, rewrite


def manifest_repair(manifest: Manifest, stored: dict[int, tuple[int, bytes]]) -> bool:
    """Recompute the entries of sets whose stored version differs from the manifest's (a writer
    stopped between writing a set and its manifest), with the arrivals it took in. Returns
    whether anything changed."""
    repaired = False
    for set_id, (version, blob) in stored.items():  # only those read: never a walk of them all
        index = manifest.index_of(set_id)
        if index is None or blob is None:
            continue
        if version != manifest.set_version(index):
            records = records_of(blob)
            present = set(records)
            for record in manifest.arrivals_of(set_id):
                if record in present:
                    del manifest.arrivals[record]  # taken in by the write the manifest missed
                else:
                    records.append(record)
            records.sort()
            info = (
                SetInfo.of(set_id, version, records)
                if records
                else SetInfo(set_id, version, 0, manifest.last(index), {})
            )
            manifest.splice(index, 1, [info])
            repaired = True
    return repaired

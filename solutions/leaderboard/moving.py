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

**A set's document is never written over.** A set written anew is a new document under a new id,
and the manifest lists it in place of the old one, deleted once nothing lists it; only a gone
list is added to a set in place, at the version the writer checked. So whatever an applier that
outlived its lease writes from what it read before the holder's folds is a document nothing
lists, or a gone list its version check refuses. A record is removed only if it is there and
inserted only if it is not, so the same moves applied twice change nothing, and a set whose gone
list was written but not its manifest (a writer stopped between the two) is recomputed from the
set as it is (`manifest_repair`). `sets_build` makes a manifest and its sets from records
already sorted (rebuilds and bulk loads).

Pure, like `sets`: `orders` reads and writes what it changes.
"""

from __future__ import annotations

import bisect
import itertools
import secrets
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from . import sets
from .sets import Manifest, SetInfo, record_score, records_of, separator

# A set's or node's id carries the day whose order wrote it (its **birth day**) above BORN_SHIFT
# random bits: the day's orders share the documents of the day before until they change them
# (see `orders`), so a document's name must not depend on the order reading it, and the days
# before the history kept are pruned by that day alone.
BORN_SHIFT = 46


def new_set_id(born: int) -> int:
    """A set's (or node's) id born on day `born` (0 for an all-time order): random below the
    day, so two writers can never pick the same one."""
    return born << BORN_SHIFT | secrets.randbits(BORN_SHIFT)


def born_of(set_id: int) -> int:
    """The day whose order wrote the set or node with this id (see `new_set_id`)."""
    return set_id >> BORN_SHIFT


@dataclass(frozen=True)
class Move:
    """One programmer's change on a board day: out of `old` and into `new` (None: not there)."""

    old: bytes | None
    new: bytes | None


@dataclass
class Rewrite:
    """What a batch of moves changed: {set id: (version, records blob)} to write (each a new
    document), {set id: (version, records)} to list as gone beside a set's records, and set ids
    the manifest no longer lists."""

    written: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    gone: dict[int, tuple[int, list[bytes]]] = field(default_factory=dict)
    dropped: list[int] = field(default_factory=list)


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
    and those members leave (a writer checks their versions before it plans, see `orders`)."""
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
    a member leaves or joins, the writer being unsure of what the sets hold, see `orders`: a
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
) -> Rewrite:
    """Apply moves to the manifest (in place, with its score counts read) and to the sets it lists.

    `loaded`: set id -> records blob of every set read whole (see `sets_plan`, and the inline
    one); `fold`: those that take their arrivals in; `leaving`: sets that members leave by a gone
    list. A member leaving a set leaves its arrivals, or the set if it was read (and is
    written), or else is listed as gone beside the set's records; a member joining one joins
    the manifest's arrivals, unless the set takes them in (folded, new, or kept inside the
    manifest). So most moves write the manifest and small lists of gone records; a set's
    arrivals are written into it together, once there are many. A record read is removed only if
    present and inserted only if absent, so the same moves applied twice change nothing (a
    writer lists a record as gone only in a set whose version it checked, see `orders`)."""
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
            manifest.splice(0, 0, [SetInfo(new_set_id(manifest.born), 0, 0, separator(record), {})])
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


def _sets_replace(manifest: Manifest, changes: _SetChanges) -> Rewrite:
    """Put the changed sets back (each under a new id), split full ones into new sets and drop
    empty ones, and count the arrivals and gone records of the others, with their manifest
    entries (last first, so indexes hold)."""
    rewrite = Rewrite()
    members = changes.members
    for index in sorted(set(members) | changes.arrived | set(changes.gone), reverse=True):
        info = manifest.info(index)
        scores = Counter(info.scores)
        scores.update(changes.counts.get(index, {}))
        scores = {score: n for score, n in scores.items() if n > 0}
        waiting = manifest.arrivals_of(info.set_id)
        records = members.get(index)
        if records is None and index in changes.gone and scores:
            entries = _entries_gone(rewrite, info, changes.gone[index], scores, waiting)
        elif records is None or (not records and waiting):
            entries = _entries_waiting(rewrite, manifest, info, records, scores, waiting)
        elif not records:
            entries = _entries_dropped(rewrite, info)
        elif len(records) <= sets.SET_MAX:
            entries = _entries_rewritten(rewrite, manifest, info, records, scores, waiting)
        else:
            entries = _entries_split(rewrite, manifest, info, records)
        manifest.splice(index, 1, entries)
    return rewrite


def _entries_waiting(
    rewrite: Rewrite,
    manifest: Manifest,
    info: SetInfo,
    records: list[bytes] | None,
    scores: dict[int, int],
    waiting: list[bytes],
) -> list[SetInfo]:
    """The entry of a set whose document stays as it is (`records` None) or as its records left
    it (empty, its members all waiting): it counts the set's arrivals, and its last member may be
    one of them."""
    if not scores:
        return _entries_dropped(rewrite, info)
    set_id, version = info.set_id, info.version
    if records is not None:  # written empty, its members all waiting
        set_id, version = _renamed(rewrite, manifest, info), version + 1
        rewrite.written[set_id] = (version, b"")
    lasts = [info.last if records is None else b"", *map(separator, waiting[-1:])]
    return [SetInfo(set_id, version, sum(scores.values()), max(lasts), scores)]


def _renamed(rewrite: Rewrite, manifest: Manifest, info: SetInfo) -> int:
    """A new id for a set written anew, its arrivals still waiting moved to it: a set's document
    is never written over, so that an applier that outlived its lease, writing what it read
    before the holder's folds, can only ever make documents that nothing lists. The old one is
    deleted once the manifest no longer lists it."""
    set_id = new_set_id(manifest.born)
    _entries_dropped(rewrite, info)
    for record in manifest.arrivals_of(info.set_id):
        manifest.arrivals[record] = set_id
    return set_id


def _entries_gone(
    rewrite: Rewrite,
    info: SetInfo,
    gone: list[bytes],
    scores: dict[int, int],
    waiting: list[bytes],
) -> list[SetInfo]:
    """The entry of a set that members left without it being read: a new version, and the
    records to list as gone beside its own (its last member stays an upper bound of what it
    holds, as the separators need)."""
    version = info.version + 1
    rewrite.gone[info.set_id] = (version, sorted(gone))
    last = max([info.last, *map(separator, waiting[-1:])])
    return [SetInfo(info.set_id, version, sum(scores.values()), last, scores)]


def _entries_dropped(rewrite: Rewrite, info: SetInfo) -> list[SetInfo]:
    """No entry for an empty set, whose document (if it was ever stored) is deleted."""
    if info.version:
        rewrite.dropped.append(info.set_id)
    return []


def _entries_rewritten(
    rewrite: Rewrite,
    manifest: Manifest,
    info: SetInfo,
    records: list[bytes],
    scores: dict[int, int],
    waiting: list[bytes],
) -> list[SetInfo]:
    """The entry of a set written anew (under a new id), counting the arrivals still waiting."""
    version = info.version + 1
    set_id = _renamed(rewrite, manifest, info)
    rewrite.written[set_id] = (version, b"".join(records))
    last = max([separator(records[-1]), *map(separator, waiting[-1:])])
    return [SetInfo(set_id, version, len(records) + len(waiting), last, scores)]


def _entries_split(
    rewrite: Rewrite, manifest: Manifest, info: SetInfo, records: list[bytes]
) -> list[SetInfo]:
    """The entries of a full set split into sets of their own, leaving the full one as it was
    until the manifest stops listing it: a writer stopped halfway loses nothing. (Only a set
    taking its arrivals in grows, so none are left waiting for it.)"""
    parts = [SetInfo.of(new_set_id(manifest.born), 1, part) for part in _split(records)]
    for part, part_records in zip(parts, _split(records), strict=True):
        rewrite.written[part.set_id] = (1, b"".join(part_records))
    _entries_dropped(rewrite, info)
    return parts


def _split(records: list[bytes]) -> Iterator[list[bytes]]:
    """Equal parts of at most sets.SET_MAX members (nothing for an empty set), each cut where the
    separators differ (`_cut`)."""
    parts = -(-len(records) // sets.SET_MAX)
    size = -(-len(records) // max(parts, 1))
    start = 0
    while start < len(records):
        end = _cut(records, start, start + size)
        yield records[start:end]
        start = end


def _cut(records: list[bytes], start: int, wanted: int) -> int:
    """Where to end a set that starts at `start`: at `wanted` or the nearest place after it
    (else before it) whose two members have different separators, so a bisect on separators
    finds every member's set; the end of the records when there is none."""
    if wanted >= len(records):
        return len(records)
    for end in itertools.chain(range(wanted, len(records)), range(wanted - 1, start, -1)):
        if separator(records[end - 1]) != separator(records[end]):
            return end
    return len(records)


def sets_build(
    ordered: Iterable[bytes], fill: int | None = None, born: int = 0
) -> tuple[Manifest, Rewrite]:
    """A manifest and its sets from records already in listing order (rebuilds, bulk loads),
    `fill` members a set (sets.SET_FILL), born on day `born` (see `new_set_id`)."""
    fill = fill or sets.SET_FILL
    manifest, rewrite, chunk, infos = Manifest(version=1, born=born), Rewrite(), [], []

    def flush() -> None:
        set_id = new_set_id(born)
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

"""Sorted entry sets with a manifest: the order of one board day, read and written in pieces.

After "Massive Distributed Sorted Sets" (shared/seeds/004): the programmers on a board day are
kept in listing order, cut into **sets** of at most `SET_MAX` members, each stored as one
document; a **manifest** lists the sets in order with each one's length, last member and score
counts, and the day's histogram (their sum). Reading a page at any offset walks the manifest's
lengths and fetches the one or two sets that hold it; a programmer's place is found by bisecting
the manifest with their sort bytes and reading one set. Every read is a bounded number of `_id`
reads, whatever the size of the board, and a shared rank is the histogram alone.

A **member** is a fixed-width record whose bytes sort in listing order:

    8 bytes   MAX_KEY - sort key (big-endian): a better key sorts first
    32 bytes  the handle in lower case, NUL-padded: equal keys are listed by handle
    8 bytes   the programmer id (big-endian): every member is unique
    4 bytes   which letters of the handle are capitals (bit i: letter i), to show it as written

A set is its records concatenated: one binary value, which every MongoDB-compatible server stores
and returns without looking inside (the embedded server decodes an array element by element).

**A manifest is columns of fixed width** (set ids, versions, lengths, and the first
`SEPARATOR_BYTES` of each set's last member) plus each set's score counts and the histogram, so
a million programmers (some two thousand sets a day) cost a bisect, a prefix sum in C and a few
slices, never a Python object per set: a solve touches dozens of manifests, and decoding each
whole would grow with the board. Sets are only cut between members whose first
`SEPARATOR_BYTES` differ, so bisecting those finds every member's set exactly.

**Everything in a manifest is computed from the sets' contents** (`SetInfo.of`), kept up to date
by each move (a record is removed only if it is there and inserted only if it is not, and the
counts change with it), so applying the same moves twice changes nothing. Each set carries a
version that its manifest entry repeats: a set written whose manifest was not (a writer stopped
between the two) shows a mismatch, and the next writer recomputes that entry from the set as it
is (`manifest_repair`). A set that splits is written anew under new ids and the old one is only
dropped once the manifest no longer lists it (`Manifest.trash`), so a stopped writer never loses
the members it was moving.

A reader lays the moves a board's journal holds over the manifest it read (`Manifest
.journal_lay`, see `journals`): a member leaving counts out of its set as a
**departure** (still written in it, skipped when the set is read), a member joining as an
arrival, with the histogram changed to match.

This module is pure: it changes manifests and sets in memory; `orders` writes them and `reading`
reads them.
"""

from __future__ import annotations

import bisect
import itertools
import secrets
import struct
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from . import maths

SET_MAX = 1024  # a set splits in two past this many members
SET_FILL = SET_MAX // 2  # how full a bulk build leaves sets, so solves rarely split them
HANDLE_BYTES = 32
SORT_BYTES = 8 + HANDLE_BYTES + 8
RECORD_BYTES = SORT_BYTES + 4  # handles are ASCII, at most 32 letters (`rules.HANDLE_PATTERN`)
SEPARATOR_BYTES = 16  # of a set's last member in its manifest: the key and 8 letters of handle
ARRIVALS_MAX = 48  # members a manifest holds for sets that were not written (see `moves_apply`)
MAX_KEY = 2**63 - 1
SCORE = struct.Struct(">IH")  # a (score, members) pair of a set's score counts
HISTOGRAM = struct.Struct(">II")  # a (score, members) pair of a day's histogram


@dataclass(frozen=True)
class Member:
    """One programmer's place on a board day."""

    key: int  # `maths.sort_key`: the score and when it was reached
    handle: str
    programmer_id: int

    @property
    def score(self) -> int:
        return maths.key_score(self.key)

    def record(self) -> bytes:
        return (MAX_KEY - self.key).to_bytes(8, "big") + handle_bytes(
            self.handle, self.programmer_id
        )

    @classmethod
    def from_record(cls, record: bytes) -> Member:
        lower = record[8 : 8 + HANDLE_BYTES].rstrip(b"\0").decode()
        capitals = int.from_bytes(record[SORT_BYTES:RECORD_BYTES], "big")
        return cls(
            key=_record_key(record),
            handle="".join(c.upper() if capitals >> i & 1 else c for i, c in enumerate(lower)),
            programmer_id=int.from_bytes(record[8 + HANDLE_BYTES : SORT_BYTES], "big"),
        )


def handle_bytes(handle: str, programmer_id: int) -> bytes:
    """A record without its key: the same for a programmer on every board day."""
    capitals = sum(1 << i for i, c in enumerate(handle) if c.isupper())
    return (
        handle.lower().encode().ljust(HANDLE_BYTES, b"\0")
        + programmer_id.to_bytes(8, "big")
        + capitals.to_bytes(4, "big")
    )


def _record_key(record: bytes) -> int:
    return MAX_KEY - int.from_bytes(record[:8], "big")


def record_score(record: bytes) -> int:
    return maths.key_score(_record_key(record))


def record_programmer(record: bytes) -> int:
    return int.from_bytes(record[8 + HANDLE_BYTES : SORT_BYTES], "big")


def records_of(blob: bytes) -> list[bytes]:
    return [blob[i : i + RECORD_BYTES] for i in range(0, len(blob), RECORD_BYTES)]


def scores_pack(scores: dict[int, int]) -> bytes:
    return b"".join(SCORE.pack(s, n) for s, n in sorted(scores.items(), reverse=True) if n)


def scores_unpack(packed: bytes) -> dict[int, int]:
    return dict(SCORE.iter_unpack(packed))


def histogram_pack(histogram: dict[int, int]) -> bytes:
    return b"".join(HISTOGRAM.pack(s, n) for s, n in sorted(histogram.items(), reverse=True))


def histogram_unpack(packed: bytes) -> dict[int, int]:
    return dict(HISTOGRAM.iter_unpack(packed))


def separator(record: bytes) -> bytes:
    """What a manifest keeps of a set's last member: enough to bisect with, because sets are only
    cut between members whose separators differ (`_cut`)."""
    return record[:SEPARATOR_BYTES]


@dataclass
class SetInfo:
    """A set as the manifest lists it: all of it computed from the set's records."""

    set_id: int
    version: int
    length: int
    last: bytes  # the separator of its last member
    scores: dict[int, int]  # score -> members of the set with it

    @classmethod
    def of(cls, set_id: int, version: int, records: list[bytes]) -> SetInfo:
        scores = Counter(record_score(r) for r in records)
        return cls(set_id, version, len(records), separator(records[-1]), dict(scores))


class _Column(Sequence):
    """Fixed-width values packed in one bytes object, as a sequence (for `bisect`)."""

    def __init__(self, data: bytes | bytearray, width: int) -> None:
        self.data, self.width = data, width

    def __len__(self) -> int:
        return len(self.data) // self.width

    def __getitem__(self, index):  # an int only: bisect never slices
        return bytes(self.data[index * self.width : (index + 1) * self.width])


class Manifest:
    """The order of one board day: its sets in order, as columns of fixed width (id, version,
    length, separator of the last member), each set's score counts (the number of pairs a set,
    then the pairs of every set), and the day's histogram.

    Readers ask only for the columns they use: `lasts` None means not read, and `scores_read`
    False that the score counts were not (only writers need them)."""

    def __init__(
        self,
        *,
        version: int = 0,
        ids: bytes = b"",
        versions: bytes = b"",
        lengths: bytes = b"",
        lasts: bytes | None = b"",
        score_counts: bytes | None = b"",
        score_pairs: bytes = b"",
        histogram: dict[int, int] | None = None,
        inline: dict[int, tuple[int, bytes]] | None = None,
        trash: Iterable[int] = (),
        arrivals: Iterable[tuple[bytes, int]] = (),
        level: int = 0,
    ) -> None:
        self.version = version  # bumped by every write, for compare-and-swap
        # 0: the entries are sets of members; n: manifests of level n - 1 (see `tree`).
        self.level = level
        self.ids = bytearray(ids)  # 8 bytes a set
        self.versions = bytearray(versions)  # 4 bytes a set
        self.lengths = bytearray(lengths)  # 4 bytes a set
        self.lasts = None if lasts is None else bytearray(lasts)  # SEPARATOR_BYTES a set
        self.scores_read = score_counts is not None
        self.score_counts = bytearray(score_counts or b"")  # 2 bytes a set: its pairs
        self.score_pairs = bytearray(score_pairs)  # SCORE pairs, set after set
        self._pairs_before: list[int] | None = None  # prefix sums of score_counts
        self.histogram = dict(histogram or {})  # {score: members}: the day's rank data
        # The one set of a small order, kept inside the manifest: {set id: (version, records)}.
        self.inline = dict(inline or {})
        self.trash = list(trash)  # sets no longer listed, deleted by the next writer
        # Members counted in their set's entry but not yet written into it: {record: set id}.
        self.arrivals = dict(arrivals)
        # Members still written in their set but no longer counted in it (only readers, which
        # lay a journal over the manifest, see `journal_lay`): {record: set id}.
        self.departures: dict[bytes, int] = {}
        self.folded = -1  # the journal epoch whose moves the manifest holds (see `journals`)

    def __len__(self) -> int:
        return len(self.ids) // 8

    def set_id(self, index: int) -> int:
        return int.from_bytes(self.ids[index * 8 : index * 8 + 8], "big")

    def index_of(self, set_id: int) -> int | None:
        """Where a set is listed (None: not listed), found by the bytes search of C."""
        wanted, start = set_id.to_bytes(8, "big"), 0
        while (found := self.ids.find(wanted, start)) >= 0:
            if found % 8 == 0:
                return found // 8
            start = found + 1
        return None

    def set_version(self, index: int) -> int:
        return int.from_bytes(self.versions[index * 4 : index * 4 + 4], "big")

    def length(self, index: int) -> int:
        return int.from_bytes(self.lengths[index * 4 : index * 4 + 4], "big")

    def set_ids(self) -> list[int]:
        return list(struct.unpack(f">{len(self)}Q", self.ids))

    def arrivals_of(self, set_id: int) -> list[bytes]:
        """The members of a set that are not written into it yet, in order."""
        return sorted(record for record, owner in self.arrivals.items() if owner == set_id)

    def departures_of(self, set_id: int) -> set[bytes]:
        return {record for record, owner in self.departures.items() if owner == set_id}

    def journal_lay(self, pairs: Iterable[tuple[bytes | None, bytes | None]]) -> None:
        """Lay a journal's moves over a manifest just read, for a reader: each pair takes a
        programmer out of the record the manifest holds (`gone`) and into another (`came`), by
        the sets' lengths and the histogram only, as departures and arrivals that the sets' reads
        follow (see `reading._records`). Without the separators read (a histogram read), only the
        histogram changes."""
        for gone, came in pairs:
            if gone is not None:
                index = self._lay(gone, -1)
                if self.arrivals.pop(gone, None) is None and index is not None:
                    self.departures[gone] = self.set_id(index)
            if came is not None:
                index = self._lay(came, 1)
                if index is not None:
                    self.arrivals[came] = self.set_id(index)

    def _lay(self, record: bytes, by: int) -> int | None:
        """Count a record in or out of the histogram and of its set's length: the index of that
        set (None: the separators were not read)."""
        score = record_score(record)
        self.histogram[score] = self.histogram.get(score, 0) + by
        if not self.histogram[score]:
            del self.histogram[score]
        if self.lasts is None:
            return None
        if not len(self):  # an order only the journal holds yet: one empty set to count in
            self.splice(0, 0, [SetInfo(0, 0, 0, separator(record), {})])
            self.inline = {0: (0, b"")}
        index = self.set_for(record)
        at = slice(index * 4, index * 4 + 4)
        self.lengths[at] = (self.length(index) + by).to_bytes(4, "big")
        return index

    def last(self, index: int) -> bytes:
        if self.lasts is None:
            return bytes(SEPARATOR_BYTES)
        return bytes(self.lasts[index * SEPARATOR_BYTES : (index + 1) * SEPARATOR_BYTES])

    def _pairs(self, index: int, end: int) -> bytes:
        """The packed score counts of the sets from `index` to `end`."""
        if self._pairs_before is None:
            counts = struct.unpack(f">{len(self)}H", self.score_counts)
            self._pairs_before = [0, *itertools.accumulate(counts)]
        return bytes(
            self.score_pairs[
                self._pairs_before[index] * SCORE.size : self._pairs_before[end] * SCORE.size
            ]
        )

    def info(self, index: int) -> SetInfo:
        scores = scores_unpack(self._pairs(index, index + 1)) if self.scores_read else {}
        return SetInfo(
            self.set_id(index),
            self.set_version(index),
            self.length(index),
            self.last(index),
            scores,
        )

    def set_lengths(self) -> tuple[int, ...]:
        return struct.unpack(f">{len(self)}I", self.lengths)

    @property
    def total(self) -> int:
        return sum(self.set_lengths())

    def set_at(self, offset: int) -> tuple[int, int] | None:
        """(index of the set holding 0-based `offset`, offset inside it); None past the end."""
        ends = list(itertools.accumulate(self.set_lengths()))
        index = bisect.bisect_right(ends, offset)
        if index == len(ends):
            return None
        return index, offset - (ends[index - 1] if index else 0)

    def offset_of_set(self, index: int) -> int:
        return sum(self.set_lengths()[:index])

    def set_for(self, sort_bytes: bytes) -> int:
        """The index of the set a member with these sort bytes belongs in (-1: no sets yet)."""
        if not len(self):
            return -1
        found = bisect.bisect_left(_Column(self.lasts, SEPARATOR_BYTES), separator(sort_bytes))
        return min(found, len(self) - 1)

    def cut(self, start: int, end: int) -> Manifest:
        """A manifest of the entries from `start` to `end` (with its score counts read): their
        columns, the histogram they sum to and their arrivals (see `tree`)."""
        pairs = self._pairs(start, end)
        ids = set(struct.unpack(f">{end - start}Q", self.ids[start * 8 : end * 8]))
        histogram: Counter[int] = Counter()
        for score, members in SCORE.iter_unpack(pairs):
            histogram[score] += members
        assert self.lasts is not None  # writers read every column
        return Manifest(
            version=0,
            level=self.level,
            ids=self.ids[start * 8 : end * 8],
            versions=self.versions[start * 4 : end * 4],
            lengths=self.lengths[start * 4 : end * 4],
            lasts=self.lasts[start * SEPARATOR_BYTES : end * SEPARATOR_BYTES],
            score_counts=self.score_counts[start * 2 : end * 2],
            score_pairs=pairs,
            histogram=histogram,
            arrivals=[(r, s) for r, s in self.arrivals.items() if s in ids],
        )

    def relist(self, level: int, infos: list[SetInfo]) -> None:
        """List these entries of `level` instead of the manifest's own (a root growing a level,
        see `tree`), keeping its version, journal epoch and trash."""
        self.level = level
        for column in (self.ids, self.versions, self.lengths, self.score_counts, self.score_pairs):
            column.clear()
        self.lasts = bytearray()
        self._pairs_before = None
        self.histogram, self.inline, self.arrivals = {}, {}, {}
        self.splice(0, 0, infos)

    def splice(self, index: int, count: int, infos: list[SetInfo]) -> None:
        """Replace the `count` entries from `index` with `infos`, keeping the histogram the sum
        of the listed sets' score counts."""
        end = index + count
        if self.scores_read:
            for score, members in SCORE.iter_unpack(self._pairs(index, end)):
                self.histogram[score] = self.histogram.get(score, 0) - members
            for info in infos:
                for score, members in info.scores.items():
                    self.histogram[score] = self.histogram.get(score, 0) + members
            self.histogram = {s: n for s, n in self.histogram.items() if n}
            assert self._pairs_before is not None  # computed by `_pairs` above
            first, past = self._pairs_before[index], self._pairs_before[end]
            packed = [scores_pack(info.scores) for info in infos]
            self.score_pairs[first * SCORE.size : past * SCORE.size] = b"".join(packed)
            self.score_counts[index * 2 : end * 2] = b"".join(
                (len(p) // SCORE.size).to_bytes(2, "big") for p in packed
            )
            self._pairs_before = None
        self.ids[index * 8 : end * 8] = b"".join(i.set_id.to_bytes(8, "big") for i in infos)
        self.versions[index * 4 : end * 4] = b"".join(i.version.to_bytes(4, "big") for i in infos)
        self.lengths[index * 4 : end * 4] = b"".join(i.length.to_bytes(4, "big") for i in infos)
        if self.lasts is not None:
            width = SEPARATOR_BYTES
            self.lasts[index * width : end * width] = b"".join(i.last for i in infos)


def new_set_id() -> int:
    """A set's id: random, so two writers can never pick the same one."""
    return secrets.randbits(62)


@dataclass(frozen=True)
class Move:
    """One programmer's change on a board day: out of `old` and into `new` (None: not there)."""

    old: bytes | None
    new: bytes | None


@dataclass
class Rewrite:
    """What a batch of moves changed: {set id: (version, records blob)} to write (`created`:
    those never stored before), and set ids the manifest no longer lists."""

    written: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    created: set[int] = field(default_factory=set)
    dropped: list[int] = field(default_factory=list)


def sets_to_read(manifest: Manifest, moves: Iterable[Move]) -> tuple[set[int], set[int]]:
    """(the ids of the sets a batch of moves reads and writes, those of them that take their
    arrivals in): sets a member leaves that is not among the arrivals, and, when the arrivals
    would pass ARRIVALS_MAX, those holding the most of them, until half that is left."""
    if not len(manifest):
        return set(), set()
    arrivals = {record: manifest.set_for(record) for record in manifest.arrivals}
    read: set[int] = set()
    for move in moves:
        if move.old is not None:
            if move.old in arrivals:
                del arrivals[move.old]
            else:
                read.add(manifest.set_for(move.old))
        if move.new is not None:
            arrivals[move.new] = manifest.set_for(move.new)
    fold: set[int] = set()
    if len(arrivals) > ARRIVALS_MAX:
        left = len(arrivals)
        for index, count in Counter(arrivals.values()).most_common():
            fold.add(index)
            left -= count
            if left <= ARRIVALS_MAX // 2:
                break
    ids = {manifest.set_id(index) for index in read | fold}
    return ids, {manifest.set_id(index) for index in fold}


def moves_apply(
    manifest: Manifest, loaded: dict[int, bytes], moves: list[Move], fold: set[int] = frozenset()
) -> Rewrite:
    """Apply moves to the manifest (in place, with its score counts read) and to the sets it lists.

    `loaded`: set id -> records blob of every set `sets_to_read` named (and the inline one);
    `fold`: those that take their arrivals in. A member leaving a set leaves its arrivals, or
    the set (which is written); a member joining one joins the manifest's arrivals, unless the
    set takes them in (folded, new, or kept inside the manifest). So most moves write the
    manifest and the sets members leave; a set's arrivals are written into it together, once
    there are many. A record is removed only if present and inserted only if absent, so the same
    moves applied twice change nothing."""
    changes = _SetChanges(manifest, loaded, whole=set(fold) | set(manifest.inline))
    for move in moves:
        if move.old is not None and len(manifest):
            changes.leave(move.old)
        if move.new is not None:
            changes.join(move.new)
    for set_id in fold:  # take in the arrivals of folded sets no move touched
        if set_id in loaded:
            changes.records(manifest.set_ids().index(set_id))
    return _sets_replace(manifest, changes.members, changes.counts, changes.arrived)


class _SetChanges:
    """The changes `moves_apply` makes to the sets, by index in the manifest, until
    `_sets_replace` puts them back."""

    def __init__(self, manifest: Manifest, loaded: dict[int, bytes], whole: set[int]) -> None:
        self.manifest, self.loaded = manifest, loaded
        self.whole = whole  # ids of the sets that take their arrivals in besides new ones
        self.members: dict[int, list[bytes]] = {}  # records, for sets written
        self.counts: dict[int, Counter[int]] = {}  # change of a set's score counts
        self.arrived: set[int] = set()  # sets whose arrivals changed

    def taking_in(self, index: int) -> bool:
        return self.manifest.set_id(index) in self.whole or self.manifest.set_version(index) == 0

    def records(self, index: int) -> list[bytes]:
        """A written set's records (with its arrivals, when it takes them in)."""
        if index not in self.members:
            set_id = self.manifest.set_id(index)
            taken = self.manifest.arrivals_of(set_id) if self.taking_in(index) else []
            for record in taken:
                del self.manifest.arrivals[record]
            self.members[index] = sorted(records_of(self.loaded.get(set_id, b"")) + taken)
        return self.members[index]

    def change(self, index: int, record: bytes, by: int) -> None:
        self.counts.setdefault(index, Counter())[record_score(record)] += by

    def leave(self, record: bytes) -> None:
        """Take a member out of its set's arrivals, or out of the set if it was read."""
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

    def join(self, record: bytes) -> None:
        """Put a member into its set, when the set takes it in, else into the arrivals."""
        manifest = self.manifest
        if not len(manifest):
            manifest.splice(0, 0, [SetInfo(new_set_id(), 0, 0, separator(record), {})])
        index = manifest.set_for(record)
        if self.taking_in(index):
            found = self.records(index)
            position = bisect.bisect_left(found, record)
            if position == len(found) or found[position] != record:
                found.insert(position, record)
                self.change(index, record, 1)
        elif record not in manifest.arrivals:
            manifest.arrivals[record] = manifest.set_id(index)
            self.change(index, record, 1)
            self.arrived.add(index)


def _sets_replace(
    manifest: Manifest,
    members: dict[int, list[bytes]],
    counts: dict[int, Counter[int]],
    arrived: set[int],
) -> Rewrite:
    """Put the changed sets back (a new version under the same id), split full ones into new
    sets and drop empty ones, and count the arrivals of the others, with their manifest entries
    (last first, so indexes hold)."""
    rewrite = Rewrite()
    for index in sorted(set(members) | arrived, reverse=True):
        info = manifest.info(index)
        scores = Counter(info.scores)
        scores.update(counts.get(index, {}))
        scores = {score: n for score, n in scores.items() if n > 0}
        waiting = manifest.arrivals_of(info.set_id)
        records = members.get(index)
        if records is None or (not records and waiting):
            entries = _entries_waiting(rewrite, info, records, scores, waiting)
        elif not records:
            entries = _entries_dropped(rewrite, info)
        elif len(records) <= SET_MAX:
            entries = _entries_rewritten(rewrite, info, records, scores, waiting)
        else:
            entries = _entries_split(rewrite, info, records)
        manifest.splice(index, 1, entries)
    return rewrite


def _entries_waiting(
    rewrite: Rewrite,
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
    version = info.version
    if records is not None:  # written empty, its members all waiting
        version += 1
        rewrite.written[info.set_id] = (version, b"")
    lasts = [info.last if records is None else b"", *map(separator, waiting[-1:])]
    return [SetInfo(info.set_id, version, sum(scores.values()), max(lasts), scores)]


def _entries_dropped(rewrite: Rewrite, info: SetInfo) -> list[SetInfo]:
    """No entry for an empty set, whose document (if it was ever stored) is deleted."""
    if info.version:
        rewrite.dropped.append(info.set_id)
    return []


def _entries_rewritten(
    rewrite: Rewrite,
    info: SetInfo,
    records: list[bytes],
    scores: dict[int, int],
    waiting: list[bytes],
) -> list[SetInfo]:
    """The entry of a set written anew under its id, counting the arrivals still waiting."""
    version = info.version + 1
    rewrite.written[info.set_id] = (version, b"".join(records))
    if info.version == 0:
        rewrite.created.add(info.set_id)
    last = max([separator(records[-1]), *map(separator, waiting[-1:])])
    return [SetInfo(info.set_id, version, len(records) + len(waiting), last, scores)]


def _entries_split(rewrite: Rewrite, info: SetInfo, records: list[bytes]) -> list[SetInfo]:
    """The entries of a full set split into sets of their own, leaving the full one as it was
    until the manifest stops listing it: a writer stopped halfway loses nothing. (Only a set
    taking its arrivals in grows, so none are left waiting for it.)"""
    parts = [SetInfo.of(new_set_id(), 1, part) for part in _split(records)]
    for part, part_records in zip(parts, _split(records), strict=True):
        rewrite.written[part.set_id] = (1, b"".join(part_records))
        rewrite.created.add(part.set_id)
    if info.version:
        rewrite.dropped.append(info.set_id)
    return parts


def _split(records: list[bytes]) -> Iterator[list[bytes]]:
    """Equal parts of at most SET_MAX members (nothing for an empty set), each cut where the
    separators differ (`_cut`)."""
    parts = -(-len(records) // SET_MAX)
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


def sets_build(ordered: Iterable[bytes], fill: int | None = None) -> tuple[Manifest, Rewrite]:
    """A manifest and its sets from records already in listing order (rebuilds, bulk loads),
    `fill` members a set (SET_FILL)."""
    fill = fill or SET_FILL
    manifest, rewrite, chunk, infos = Manifest(version=1), Rewrite(), [], []

    def flush() -> None:
        set_id = new_set_id()
        rewrite.written[set_id] = (1, b"".join(chunk))
        rewrite.created.add(set_id)
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

"""Sorted entry sets with a manifest: the order of one board day, read and written in pieces.

After "Massive Distributed Sorted Sets" (shared/seeds/004): the programmers on a board day are
kept in listing order, cut into **sets** of at most `SET_MAX` members, each stored as one
document; a **manifest** lists the sets in order with each one's length, last member and score
counts, and the day's histogram (their sum). Reading a page at any offset walks the manifest's
lengths and fetches the one or two sets that hold it; a programmer's place is found by bisecting
the manifest with their sort bytes and reading one set. Every read is a bounded number of `_id`
reads, whatever the size of the board, and a shared rank is the histogram alone.

A **member** is a fixed-width record whose bytes sort in listing order, and a set is its records
concatenated in one binary value (`encoding`).

**A manifest is columns of fixed width** (set ids, versions, lengths, and the first
`SEPARATOR_BYTES` of each set's last member) plus each set's score counts and the histogram, so
a million programmers (some two thousand sets a day) cost a bisect, a prefix sum in C and a few
slices, never a Python object per set: a solve touches dozens of manifests, and decoding each
whole would grow with the board. Sets are only cut between members whose first
`SEPARATOR_BYTES` differ, so bisecting those finds every member's set exactly.

**Everything in a manifest is computed from the sets' contents** (`SetInfo.of`), kept up to date
by each move (a record is removed only if it is there and inserted only if it is not, and the
counts change with it), so applying the same moves twice changes nothing. A set written anew
(changed or split) is written under a new id, and the old one is only deleted once the manifest
no longer lists it (`Manifest.trash`), so a stopped writer never loses the members it was moving.
Each set carries a version that its manifest entry repeats: a set whose gone list was written
but not its manifest (a writer stopped between the two) shows a mismatch, and the next writer
recomputes that entry from the set as it is (`moving.manifest_repair`).

A set's document may also list records that left it without it being rewritten (its **gone**
list, see `moving`): they are no longer counted in its entry, and readers and writers leave them
out as they read it (`order_documents.set_records`).

A reader lays the moves a board's journal holds over the manifest it read (`Manifest
.journal_lay`, see `journals`): a member leaving counts out of its set as a
**departure** (still written in it, skipped when the set is read), a member joining as an
arrival, with the histogram changed to match.

This module is pure: manifests and records in memory (`moving` applies moves to them, `tree`
stacks manifests in levels); `order_writes` writes them and `reading` reads them.
"""

from __future__ import annotations

import bisect
import itertools
import struct
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .encoding import (
    SCORE,
    SEPARATOR_BYTES,
    bucket,
    coarsened,
    record_score,
    scores_pack,
    scores_unpack,
    separator,
)

SET_MAX = 1024  # a set splits in two past this many members
SET_FILL = SET_MAX // 2  # how full a bulk build leaves sets, so solves rarely split them
ARRIVALS_MAX = 48  # members a manifest holds for sets that were not written (see `moving`)
# Members a set's document lists as gone beside its records before a writer rewrites it without
# them (see `moving`): what a reader reads more, 2.7 KB at most on 26 to 53 KB of records.
GONE_MAX = 48
# Buckets a manifest's histogram holds before it counts coarser ones (see `Manifest.shift`): the
# root of a day with more distinct scores still holds at most 32 KB of histogram and 33 KB of
# its entries' score counts.
HISTOGRAM_MAX = 4096


@dataclass
class SetInfo:
    """A set as the manifest lists it: all of it computed from the set's records."""

    set_id: int
    version: int
    length: int
    last: bytes  # the separator of its last member
    scores: dict[int, int]  # score -> members of the set with it (or bucket -> members, below)
    shift: int = 0  # a node's: the shift of its histogram (see `Manifest.shift`)

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
    False that the score counts were not (only writers need them).

    **A histogram of at most HISTOGRAM_MAX buckets.** Past that many distinct scores a manifest
    counts its members by bucket of 2^`shift` scores (keyed by a bucket's lowest score,
    `bucket`), one more bit each time it outgrows the bound again, and a node's entries count
    theirs in the same buckets: entries list consecutive members, so they share at most a
    bucket with the next and all their pairs number at most HISTOGRAM_MAX + NODE_MAX. A node
    of level 0 keeps its sets' exact counts (a set holds at most SET_MAX scores); a parent is
    at least as coarse as its children, so sums stay exact by bucket. A shift only grows (until
    a rebuild). How many members score t or more is then the histogram when t starts a bucket,
    else a descent of the tree (`reading`); a day with few distinct scores has shift 0 and
    exact counts, stored as before."""

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
        born: int = 0,
        shift: int = 0,
    ) -> None:
        self.version = version  # bumped by every write, for compare-and-swap
        # The day of the order being written: the sets and nodes it makes are born on it.
        self.born = born
        # 0: the entries are sets of members; n: manifests of level n - 1 (see `tree`).
        self.level = level
        self._columns_set(ids, versions, lengths, lasts, score_counts, score_pairs)
        self.histogram = dict(histogram or {})  # {score: members}: the day's rank data
        self.shift = shift  # the histogram counts buckets of 2^shift scores (see above)
        # The one set of a small order, kept inside the manifest: {set id: (version, records)}.
        self.inline = dict(inline or {})
        self.trash = list(trash)  # sets no longer listed, deleted by the next writer
        # Members counted in their set's entry but not yet written into it: {record: set id}.
        self.arrivals = dict(arrivals)
        # Members still written in their set but no longer counted in it (only readers, which
        # lay a journal over the manifest, see `journal_lay`): {record: set id}.
        self.departures: dict[bytes, int] = {}
        self.folded = -1  # the journal epoch whose moves the manifest holds (see `journals`)

    def _columns_set(
        self,
        ids: bytes,
        versions: bytes,
        lengths: bytes,
        lasts: bytes | None,
        score_counts: bytes | None,
        score_pairs: bytes,
    ) -> None:
        """The columns as given (`lasts` None: not read; `score_counts` None: no score counts)."""
        self.ids = bytearray(ids)  # 8 bytes a set
        self.versions = bytearray(versions)  # 4 bytes a set
        self.lengths = bytearray(lengths)  # 4 bytes a set
        self.lasts = None if lasts is None else bytearray(lasts)  # SEPARATOR_BYTES a set
        self.scores_read = score_counts is not None
        self.score_counts = bytearray(score_counts or b"")  # 2 bytes a set: its pairs
        self.score_pairs = bytearray(score_pairs)  # SCORE pairs, set after set
        self._pairs_before: list[int] | None = None  # prefix sums of score_counts

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
        set (None: the separators were not read). A count never goes below zero: a departure
        from a manifest that cannot hold it is only damage (a lost root, which a rebuild
        repairs), and a reader shows what is left rather than failing."""
        score = bucket(record_score(record), self.shift)
        self.histogram[score] = max(0, self.histogram.get(score, 0) + by)
        if not self.histogram[score]:
            del self.histogram[score]
        if self.lasts is None:
            return None
        if not len(self):  # an order only the journal holds yet: one empty set to count in
            self.splice(0, 0, [SetInfo(0, 0, 0, separator(record), {})])
            self.inline = {0: (0, b"")}
        index = self.set_for(record)
        at = slice(index * 4, index * 4 + 4)
        self.lengths[at] = max(0, self.length(index) + by).to_bytes(4, "big")
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
            self.shift if self.level else 0,
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

    def sets_covering(self, index: int, inside: int, limit: int) -> list[int]:
        """The indexes of the sets that hold `limit` members from offset `inside` of set `index`
        on (as far as this manifest lists them): that set and as many after it as it takes."""
        lengths, wanted = self.set_lengths(), [index]
        covered = lengths[index] - inside
        while covered < limit and wanted[-1] + 1 < len(lengths):
            wanted.append(wanted[-1] + 1)
            covered += lengths[wanted[-1]]
        return wanted

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
        # A node's entries count by its buckets; a leaf's exactly, so its parts start exact.
        part = Manifest(
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
            born=self.born,
            shift=self.shift if self.level else 0,
        )
        part.fit()
        return part

    def relist(self, level: int, infos: list[SetInfo]) -> None:
        """List these entries of `level` instead of the manifest's own (a root growing a level,
        see `tree`), keeping its version, journal epoch and trash."""
        self.level = level
        for column in (self.ids, self.versions, self.lengths, self.score_counts, self.score_pairs):
            column.clear()
        self.lasts = bytearray()
        self._pairs_before = None
        self.histogram, self.inline, self.arrivals, self.shift = {}, {}, {}, 0
        self.splice(0, 0, infos)

    def splice(self, index: int, count: int, infos: list[SetInfo]) -> None:
        """Replace the `count` entries from `index` with `infos`, keeping the histogram the sum
        of the listed sets' score counts."""
        end = index + count
        if self.scores_read:
            self.coarsen(max([self.shift, *(info.shift for info in infos)]))
            for score, members in SCORE.iter_unpack(self._pairs(index, end)):
                at = bucket(score, self.shift)
                self.histogram[at] = self.histogram.get(at, 0) - members
            for info in infos:
                for score, members in info.scores.items():
                    at = bucket(score, self.shift)
                    self.histogram[at] = self.histogram.get(at, 0) + members
            self.histogram = {s: n for s, n in self.histogram.items() if n}
            assert self._pairs_before is not None  # computed by `_pairs` above
            first, past = self._pairs_before[index], self._pairs_before[end]
            shift = self.shift if self.level else 0  # a leaf's entries count exactly
            packed = [scores_pack(coarsened(info.scores, shift)) for info in infos]
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
        self.fit()

    def fit(self) -> None:
        """Coarsen the histogram a bit at a time until it holds at most HISTOGRAM_MAX buckets."""
        while len(self.histogram) > HISTOGRAM_MAX:
            self.coarsen(self.shift + 1)

    def coarsen(self, shift: int) -> None:
        """Count the histogram (and a node's entries) in buckets of 2^shift scores, if coarser."""
        if shift <= self.shift:
            return
        self.histogram = coarsened(self.histogram, shift)
        if self.level and self.scores_read:
            counts = [scores_unpack(self._pairs(i, i + 1)) for i in range(len(self))]
            packed = [scores_pack(coarsened(scores, shift)) for scores in counts]
            self.score_pairs = bytearray(b"".join(packed))
            self.score_counts = bytearray(
                b"".join((len(p) // SCORE.size).to_bytes(2, "big") for p in packed)
            )
            self._pairs_before = None
        self.shift = shift

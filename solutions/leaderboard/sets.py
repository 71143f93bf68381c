"""Sorted entry sets with a manifest: the order of one board day, read and written in pieces.

After "Massive Distributed Sorted Sets" (shared/seeds/004): the programmers on a board day are
kept in listing order, cut into **sets** of at most `SET_MAX` members, each stored as one
document; a **manifest** lists the sets in order with each one's length, last member and score
counts. Reading a page at any offset walks the manifest's lengths and fetches the one or two sets
that hold it; a programmer's place is found by bisecting the manifest with their sort bytes and
reading one set. Every read is a bounded number of `_id` reads, whatever the size of the board,
and the manifest's score counts are the day's histogram, so a shared rank is one read.

A **member** is a fixed-width record whose bytes sort in listing order:

    8 bytes   MAX_KEY - sort key (big-endian): a better key sorts first
    32 bytes  the handle in lower case, NUL-padded: equal keys are listed by handle
    8 bytes   the programmer id (big-endian): every member is unique
    32 bytes  the handle as written, NUL-padded (for display)

A set is its records concatenated: one binary value, which every MongoDB-compatible server stores
and returns without looking inside (the embedded server decodes an array element by element, but
a binary costs about the same at 80 bytes or 80 KB).

**Everything in a manifest is computed from the sets' contents** (`SetInfo.of`), and a move
removes a record only if it is there and inserts one only if it is not. So applying the same moves
twice changes nothing, and after a crash between writing a set and writing its manifest the next
writer recomputes the manifest from the sets as they are (each set carries a version that its
manifest entry repeats; a mismatch means the manifest is behind).

This module is pure: it changes manifests and sets in memory; `store` reads and writes them.
"""

from __future__ import annotations

import bisect
import secrets
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from . import maths

SET_MAX = 1024  # a set splits in two past this many members
SET_FILL = SET_MAX // 2  # how full a bulk build leaves sets, so solves rarely split them
HANDLE_BYTES = 32
SORT_BYTES = 8 + HANDLE_BYTES + 8
RECORD_BYTES = SORT_BYTES + HANDLE_BYTES
MAX_KEY = 2**63 - 1


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
        return (
            (MAX_KEY - self.key).to_bytes(8, "big")
            + self.handle.lower().encode().ljust(HANDLE_BYTES, b"\0")
            + self.programmer_id.to_bytes(8, "big")
            + self.handle.encode().ljust(HANDLE_BYTES, b"\0")
        )

    @classmethod
    def from_record(cls, record: bytes) -> Member:
        return cls(
            key=_record_key(record),
            handle=record[SORT_BYTES:].rstrip(b"\0").decode(),
            programmer_id=int.from_bytes(record[8 + HANDLE_BYTES : SORT_BYTES], "big"),
        )


def _record_key(record: bytes) -> int:
    return MAX_KEY - int.from_bytes(record[:8], "big")


def records_of(blob: bytes) -> list[bytes]:
    return [blob[i : i + RECORD_BYTES] for i in range(0, len(blob), RECORD_BYTES)]


@dataclass
class SetInfo:
    """A set as the manifest lists it: all of it computed from the set's records."""

    set_id: int
    version: int
    length: int
    last: bytes  # the sort bytes of its last member
    scores: dict[int, int]  # score -> members of the set with it

    @classmethod
    def of(cls, set_id: int, version: int, records: list[bytes]) -> SetInfo:
        scores = Counter(maths.key_score(_record_key(r)) for r in records)
        return cls(set_id, version, len(records), records[-1][:SORT_BYTES], dict(scores))


@dataclass
class Manifest:
    """The order of one board day: its sets in order."""

    sets: list[SetInfo] = field(default_factory=list)
    version: int = 0  # bumped by every write, for compare-and-swap
    # The one set of a small order, kept inside the manifest: {set id: (version, records)}.
    inline: dict[int, tuple[int, bytes]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(info.length for info in self.sets)

    @property
    def histogram(self) -> dict[int, int]:
        """{score: members}: the day's rank data, summed from the sets."""
        counts: Counter[int] = Counter()
        for info in self.sets:
            counts.update(info.scores)
        return dict(counts)

    def set_at(self, offset: int) -> tuple[int, int] | None:
        """(index of the set holding 0-based `offset`, offset inside it); None past the end."""
        for index, info in enumerate(self.sets):
            if offset < info.length:
                return index, offset
            offset -= info.length
        return None

    def offset_of_set(self, index: int) -> int:
        return sum(info.length for info in self.sets[:index])

    def set_for(self, sort_bytes: bytes) -> int:
        """The index of the set a member with these sort bytes belongs in (-1: no sets yet)."""
        if not self.sets:
            return -1
        lasts = [info.last for info in self.sets]
        return min(bisect.bisect_left(lasts, sort_bytes), len(self.sets) - 1)


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
    """What a batch of moves changed: {set id: (version, records blob)} to write, set ids to
    delete."""

    written: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    dropped: list[int] = field(default_factory=list)


def sets_touched(manifest: Manifest, moves: Iterable[Move]) -> set[int]:
    """The ids of the sets a batch of moves reads."""
    touched = set()
    for move in moves:
        for record in (move.old, move.new):
            index = manifest.set_for(record[:SORT_BYTES]) if record else -1
            if index >= 0:
                touched.add(manifest.sets[index].set_id)
    return touched


def moves_apply(manifest: Manifest, loaded: dict[int, bytes], moves: list[Move]) -> Rewrite:
    """Apply moves to the manifest (in place) and to the sets it lists (`loaded`: set id -> blob
    of every set `sets_touched` named). A record is removed only if present and inserted only if
    absent, so the same moves applied twice change nothing."""
    members: dict[int, list[bytes]] = {}  # index in manifest -> records, for changed sets

    def records(index: int) -> list[bytes]:
        if index not in members:
            members[index] = records_of(loaded.get(manifest.sets[index].set_id, b""))
        return members[index]

    for move in moves:
        if move.old is not None and manifest.sets:
            found = records(manifest.set_for(move.old[:SORT_BYTES]))
            position = bisect.bisect_left(found, move.old)
            if position < len(found) and found[position] == move.old:
                del found[position]
        if move.new is not None:
            if not manifest.sets:
                manifest.sets.append(SetInfo(new_set_id(), 0, 0, move.new[:SORT_BYTES], {}))
            found = records(manifest.set_for(move.new[:SORT_BYTES]))
            position = bisect.bisect_left(found, move.new)
            if position == len(found) or found[position] != move.new:
                found.insert(position, move.new)
    return _sets_replace(manifest, members)


def _sets_replace(manifest: Manifest, members: dict[int, list[bytes]]) -> Rewrite:
    """Put the changed sets back (a new version under the same id), splitting full ones and
    dropping empty ones, and recompute their manifest entries."""
    rewrite = Rewrite()
    replaced: list[SetInfo] = []
    for index, info in enumerate(manifest.sets):
        if index not in members:
            replaced.append(info)
            continue
        parts = list(_split(members[index]))
        if not parts:
            rewrite.dropped.append(info.set_id)
        for number, part in enumerate(parts):
            set_id = info.set_id if number == 0 else new_set_id()
            version = info.version + 1 if number == 0 else 1
            rewrite.written[set_id] = (version, b"".join(part))
            replaced.append(SetInfo.of(set_id, version, part))
    manifest.sets = replaced
    return rewrite


def _split(records: list[bytes]) -> Iterator[list[bytes]]:
    """Equal parts of at most SET_MAX members (nothing for an empty set)."""
    if not records:
        return
    parts = -(-len(records) // SET_MAX)
    size = -(-len(records) // parts)
    for start in range(0, len(records), size):
        yield records[start : start + size]


def sets_build(ordered: Iterable[bytes], fill: int = SET_FILL) -> tuple[Manifest, Rewrite]:
    """A manifest and its sets from records already in listing order (rebuilds, bulk loads)."""
    manifest, rewrite, chunk = Manifest(version=1), Rewrite(), []

    def flush() -> None:
        set_id = new_set_id()
        rewrite.written[set_id] = (1, b"".join(chunk))
        manifest.sets.append(SetInfo.of(set_id, 1, chunk))
        chunk.clear()

    for record in ordered:
        chunk.append(record)
        if len(chunk) == fill:
            flush()
    if chunk:
        flush()
    return manifest, rewrite


def manifest_repair(manifest: Manifest, stored: dict[int, tuple[int, bytes]]) -> bool:
    """Recompute the entries of sets whose stored version differs from the manifest's (a writer
    stopped between writing a set and its manifest). Returns whether anything changed."""
    repaired = False
    for index, info in enumerate(manifest.sets):
        version, blob = stored.get(info.set_id, (info.version, None))
        if version != info.version and blob is not None:
            records = records_of(blob)
            manifest.sets[index] = (
                SetInfo.of(info.set_id, version, records)
                if records
                else SetInfo(info.set_id, version, 0, info.last, {})
            )
            repaired = True
    return repaired

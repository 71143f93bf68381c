"""The bytes of an order: its members as records that sort in listing order, and the score
counts and histograms its manifests keep, packed (see `sets`).

A **member** is a fixed-width record whose bytes sort in listing order:

    8 bytes   MAX_KEY - sort key (big-endian): a better key sorts first
    32 bytes  the handle in lower case, NUL-padded: equal keys are listed by handle
    8 bytes   the programmer id (big-endian): every member is unique
    4 bytes   which letters of the handle are capitals (bit i: letter i), to show it as written

A set is its records concatenated: one binary value, which every MongoDB-compatible server stores
and returns without looking inside (the embedded server decodes an array element by element). A
manifest keeps the first SEPARATOR_BYTES of each set's last member (its **separator**), enough
to bisect with. Score counts are (score, members) pairs, best first; a coarse histogram (see
`sets.Manifest`) counts buckets of 2^shift scores, after a mark of its shift.

This module is pure: bytes in memory.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass

from . import maths

HANDLE_BYTES = 32
SORT_BYTES = 8 + HANDLE_BYTES + 8
RECORD_BYTES = SORT_BYTES + 4  # handles are ASCII, at most 32 letters (`rules.HANDLE_PATTERN`)
SEPARATOR_BYTES = 16  # of a set's last member in its manifest: the key and 8 letters of handle
MAX_KEY = 2**63 - 1
# A (score, members) pair of an entry's score counts: a node of the tree (see `tree`) counts
# every member below it, millions on a big board.
SCORE = struct.Struct(">II")
HISTOGRAM = struct.Struct(">II")  # a (score, members) pair of a day's histogram
SHIFT_MARK = 2**32 - 1  # the first pair of a coarse histogram as stored: (SHIFT_MARK, its shift)


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
        return record_of(self.key, handle_bytes(self.handle, self.programmer_id))

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


def record_of(key: int, tail: bytes) -> bytes:
    """A record from its sort key and its `handle_bytes`, which a programmer's many board days
    share (worked out once for them all)."""
    return (MAX_KEY - key).to_bytes(8, "big") + tail


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


def histogram_pack(histogram: dict[int, int], shift: int = 0) -> bytes:
    """A histogram as stored: its pairs, best first, after a mark of its shift when coarse."""
    mark = HISTOGRAM.pack(SHIFT_MARK, shift) if shift else b""
    return mark + b"".join(HISTOGRAM.pack(s, n) for s, n in sorted(histogram.items(), reverse=True))


def histogram_unpack(packed: bytes) -> tuple[dict[int, int], int]:
    """(the histogram, its shift) of `histogram_pack`."""
    histogram = dict(HISTOGRAM.iter_unpack(packed))
    return histogram, histogram.pop(SHIFT_MARK, 0)


def bucket(score: int, shift: int) -> int:
    """The lowest score of the bucket holding `score` in a histogram of this shift."""
    return score >> shift << shift


def coarsened(scores: dict[int, int], shift: int) -> dict[int, int]:
    """Score counts counted in the buckets of this shift (exact: buckets nest)."""
    if not shift:
        return dict(scores)
    counted: Counter[int] = Counter()
    for score, members in scores.items():
        counted[bucket(score, shift)] += members
    return dict(counted)


def score_probe(score: int) -> bytes:
    """Bytes after every record of a better score than `score` and before every other record:
    how many records sort before them is how many members score more (see `reading`)."""
    key = max(0, score + 1) << maths.TIME_BITS
    return (MAX_KEY - key + 1).to_bytes(8, "big") + bytes(RECORD_BYTES - 8)


def separator(record: bytes) -> bytes:
    """What a manifest keeps of a set's last member: enough to bisect with, because sets are only
    cut between members whose separators differ (`rewrites._cut`)."""
    return record[:SEPARATOR_BYTES]

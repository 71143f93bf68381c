"""The members of the structure bench's order, made up from their number alone.

Member n is `record_at(n)`, monotonic in listing order, so an order of any size is known without
holding it: scores fall in groups that widen with n (group g starts at member 2^(g / SCORE_STEP)
- 1, about 460 scores at 100M like a real board's long tail); inside a score group the
later-numbered member reached it later; handles are n in base 36, so the separators of any two
members differ.
"""

from __future__ import annotations

import bisect
import math

from solutions.leaderboard import encoding, maths

# Members' scores: group g starts at member 2^(g / SCORE_STEP) - 1, and the best is SCORE_TOP.
SCORE_TOP = 1_000
SCORE_STEP = 20
HANDLE_LETTERS = 8  # n in base 36: every separator differs, up to 36^8 members
MEMBERS_MAX = 36**HANDLE_LETTERS
REACHED = 100_000_000  # seconds since `maths.KEY_EPOCH` when a score group's first member got it
LATER = 200_000_000  # seconds after REACHED when the bench's solves reach a score: after anybody
_GROUP_STARTS = sorted(
    {math.floor(2 ** (g / SCORE_STEP)) - 1 for g in range(SCORE_STEP * 42)} | {MEMBERS_MAX}
)
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"  # in the order their bytes sort
_PAIRS = [a + b for a in _DIGITS for b in _DIGITS]


def score_group(n: int) -> int:
    """The score group of member n (0: the best score)."""
    return bisect.bisect_right(_GROUP_STARTS, n) - 1


def key_at(n: int) -> int:
    """The sort key of member n: a worse score every group, a later time inside one."""
    group = score_group(n)
    seconds = REACHED + n - _GROUP_STARTS[group]
    return (SCORE_TOP - group) << maths.TIME_BITS | (2**maths.TIME_BITS - 1 - seconds)


def handle_at(n: int) -> str:
    """n in 8 letters of base 36, two at a time (the bench makes millions of them)."""
    return (
        _PAIRS[n // 36**6] + _PAIRS[n // 36**4 % 1296] + _PAIRS[n // 1296 % 1296] + _PAIRS[n % 1296]
    )


def record_at(n: int, key: int | None = None) -> bytes:
    """Member n's record (`sets.Member(key, handle_at(n), n + 1).record()`, made faster), with
    its own key or another one (the member moved)."""
    assert 0 <= n < MEMBERS_MAX
    key = key_at(n) if key is None else key
    return (
        (encoding.MAX_KEY - key).to_bytes(8, "big")
        + handle_at(n).encode().ljust(encoding.HANDLE_BYTES, b"\0")
        + (n + 1).to_bytes(8, "big")
        + bytes(4)
    )


def scores_between(start: int, end: int) -> dict[int, int]:
    """{score: members} of members start to end - 1, by their groups."""
    counts, group = {}, score_group(start)
    while _GROUP_STARTS[group] < end:
        members = min(end, _GROUP_STARTS[group + 1]) - max(start, _GROUP_STARTS[group])
        if members > 0:
            counts[SCORE_TOP - group] = members
        group += 1
    return counts

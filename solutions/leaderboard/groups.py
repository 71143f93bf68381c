"""Group ranklists: the countries, or the organizations, of a board day ranked against each other.
Pure: no I/O (`journals` keeps the ranklists, `selectors` reads them).

**A group's score** on a board day is the weighted sum of its members' scores sorted from the
best, s_0 >= s_1 >= ...: ``S = sum of s_i * (1/5) * (4/5)^i`` (Kattis ranks countries and
universities this way). The weights add up to less than 1, so a group never scores more than its
best member, and each member counts for less than the one before: a group is not ranked by its
size alone. Its members are the programmers of the group on the board that day (a score above
zero); hidden and banned programmers are off the boards, so off their groups too.

**From the histogram.** Members with equal scores hold consecutive places, so with a_v members
scoring more than v and c_v scoring v, those at v add ``v * ((4/5)^a_v - (4/5)^(a_v + c_v))``:
a group's score is a sum over the histogram ({score: members}) that the engine keeps for every
order, a group's own included. Its size is the number of distinct scores, not of members.

**Exact, in bounded space.** S is a fraction over 5^n for n members: comparing two exactly takes
digits in proportion to n. A group keeps instead its **score key**, ``floor(S * 2^64)``, computed
exactly (`score_key`): the first HEAD places as an exact fraction, the rest bounded above by
``s_HEAD * (4/5)^HEAD``; when the floors of the two bounds agree (all but always) that is the key,
else more places are taken. Equal scores get equal keys, and keys differ whenever scores differ
by 2^-64 (about 5e-20) or more, as two different scores of groups of up to 27 members always do
(5^27 < 2^64): only larger groups whose scores differ by less than that share a rank. Ties share
a rank (1, 2, 2, 4), compared by key. Pages show the score with one decimal, rounded half up
(`score_tenths`; S * 10 is never exactly halfway, as its denominator is a power of 5).

**A group with many distinct scores.** Past `sets.HISTOGRAM_MAX` distinct scores a histogram
counts buckets of scores (see `sets.Manifest`); the key then takes the scores of the group's
best places from its order itself, in order (`record_of`, `reading.OrderView.group_record`):
the HEAD best, and more only in the rare case above.

**A group in a ranklist** is a record of the same width as a board day's members (see `sets`), so
a ranklist is an order like any other: sorted sets with a manifest, journaled by the batch that
moves the members and folded with them, paged by `_id` at any size. Its bytes:

    12 bytes  2^95 - 1 - the score key (big-endian): a better score sorts first
     8 bytes  the group's id: equal scores are listed by it, and sets can be cut between them
    20 bytes  zero
     8 bytes  the group's id again, where `sets` finds who a record is
     4 bytes  the members on the board that day

A record is a function of the group's histogram alone, so the batch that changes the histogram
knows the record it replaces without reading the ranklist. The manifest's own histogram counts
the groups by the whole part of their score (`encoding.record_score`), so it sums to the number of
groups ranked. A group's id is a hash of its scope (``country:BD``); the scope itself is kept
beside it (``orders.group_names_write``), as an organization's name is free text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from . import encoding

KINDS = ("country", "org")
HEAD = 320  # places summed exactly before the rest is bounded: (4/5)^320 is about 2^-103
FRACTION_BITS = 64
KEY_BYTES = 12
KEY_MAX = 2 ** (8 * KEY_BYTES - 1) - 1  # keeps the first 8 bytes a valid `sets` key
_FOURS = [4**i for i in range(HEAD + 1)]
_FIVES = [5**i for i in range(HEAD + 1)]


RANKLIST = "groups:"


def ranklist_scope(kind: str) -> str:
    """The scope under which a board day's ranklist of this kind of group is kept (an order's
    scope, beside ``""`` for everybody and ``country:BD`` for a group's own members)."""
    return f"{RANKLIST}{kind}"


def is_ranklist(scope: str) -> bool:
    return scope.startswith(RANKLIST)


def kind_of(scope: str) -> str | None:
    """``country`` or ``org`` for a group's scope (``country:BD``); None for any other."""
    kind = scope.split(":", 1)[0]
    return kind if kind in KINDS and ":" in scope else None


def group_id(scope: str) -> int:
    """A group's id: 63 bits of a hash of its scope, the same in every process."""
    digest = hashlib.blake2b(scope.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def members(histogram: Mapping[int, int]) -> int:
    """The members on the board (a score above zero)."""
    return sum(count for score, count in histogram.items() if score > 0 and count > 0)


def _power(base: int, exponent: int) -> int:
    table = _FOURS if base == 4 else _FIVES
    return table[exponent] if exponent <= HEAD else base**exponent


def _head(buckets: list[tuple[int, int]], places: int) -> tuple[int, int]:
    """(sum over the first `places` places of s_i * 4^i * 5^(places-1-i), the score at place
    `places`, 0 past the end), from the buckets (score, members), best first. A bucket of c
    members from place a adds s * 4^a * 5^(places-a-c) * (5^c - 4^c)."""
    numerator = above = 0
    for score, count in buckets:
        if above >= places:
            return numerator, score
        taken = min(count, places - above)
        numerator += (
            score
            * _power(4, above)
            * _power(5, places - above - taken)
            * (_power(5, taken) - _power(4, taken))
        )
        above += taken
        if taken < count:
            return numerator, score
    return numerator, 0


def score_key(histogram: Mapping[int, int]) -> int:
    """floor(S * 2^64) of a group with this histogram, exactly (see the module docstring)."""
    buckets = sorted(((s, n) for s, n in histogram.items() if s > 0 and n > 0), reverse=True)
    return _score_key(sum(n for _s, n in buckets), lambda _places: buckets)


def _runs(scores: list[int]) -> list[tuple[int, int]]:
    """(score, members) of scores listed best first, one pair a run of equal scores."""
    runs: list[tuple[int, int]] = []
    for score in scores:
        if runs and runs[-1][0] == score:
            runs[-1] = (score, runs[-1][1] + 1)
        elif score > 0:
            runs.append((score, 1))
    return runs


def _score_key(total: int, best: Callable[[int], list[tuple[int, int]]]) -> int:
    """`score_key` of a group of `total` members, `best(n)` giving (score, members) of at
    least its n best places (or all), best first."""
    head = HEAD
    while True:
        places = min(head, total)
        numerator, next_score = _head(best(places + 1), places)
        low = (numerator << FRACTION_BITS) // _power(5, places)
        if places == total:
            return low
        # The rest adds more than nothing and less than next_score * (4/5)^places.
        bound = numerator + next_score * _power(4, places)
        if (bound << FRACTION_BITS) // _power(5, places) == low:
            return low
        head *= 4


def score_tenths(key: int) -> int:
    """The score in tenths, rounded half up (what pages show, with one decimal)."""
    return (key * 10 + (1 << (FRACTION_BITS - 1))) >> FRACTION_BITS


def score_shown(key: int) -> float:
    """The score with one decimal, as a number."""
    return score_tenths(key) / 10


# Two different keys always differ at 20 decimals: 10^20 > 2^FRACTION_BITS.
MAX_DECIMALS = 20


def score_rounded(key: int, decimals: int) -> int:
    """The score × 10^decimals, rounded half up (as `score_tenths`)."""
    return (key * 10**decimals + (1 << (FRACTION_BITS - 1))) >> FRACTION_BITS


def score_text(key: int, decimals: int) -> str:
    """The score written with `decimals` decimals (at least 1)."""
    scaled, unit = score_rounded(key, decimals), 10**decimals
    return f"{scaled // unit}.{scaled % unit:0{decimals}d}"


def decimals_telling_apart(keys: Sequence[int], least: int = 1) -> int:
    """The fewest decimals, at least `least`, at which the different scores of a ranked list
    (best first) are written differently, so that a rank and the score beside it agree: two
    groups with different ranks never show the same score (3.5 at #2 and 3.5 at #3)."""
    pairs = [(a, b) for a, b in zip(keys, keys[1:], strict=False) if a != b]
    for decimals in range(least, MAX_DECIMALS):
        if all(score_rounded(a, decimals) != score_rounded(b, decimals) for a, b in pairs):
            return decimals
    return MAX_DECIMALS


def record(scope: str, histogram: Mapping[int, int]) -> bytes | None:
    """A group's record in its ranklist (None: nobody of the group is on the board that day)."""
    count = members(histogram)
    if not count:
        return None
    return _packed(min(score_key(histogram), KEY_MAX), group_id(scope), count)


def record_of(scope: str, total: int, scores_from_top: Callable[[int], list[int]]) -> bytes | None:
    """`record` of a group of `total` members on the board whose scores, best first, the first
    n of them, `scores_from_top(n)` gives (when its histogram counts buckets)."""
    if not total:
        return None
    key = _score_key(total, lambda places: _runs(scores_from_top(places)))
    return _packed(min(key, KEY_MAX), group_id(scope), total)


def _packed(key: int, gid: int, count: int) -> bytes:
    ident = gid.to_bytes(8, "big")
    inverted = (KEY_MAX - key).to_bytes(KEY_BYTES, "big")
    return inverted + ident + bytes(20) + ident + min(count, 2**32 - 1).to_bytes(4, "big")


def probe(key: int) -> bytes:
    """The bytes before every record with this key and after every better one: how many records
    sort before it is how many groups score better."""
    return _packed(key, 0, 0)


@dataclass(frozen=True)
class Ranked:
    """A group as its ranklist holds it."""

    key: int
    group_id: int
    members: int

    @classmethod
    def of(cls, packed: bytes) -> Ranked:
        assert len(packed) == encoding.RECORD_BYTES
        return cls(
            key=KEY_MAX - int.from_bytes(packed[:KEY_BYTES], "big"),
            group_id=int.from_bytes(packed[KEY_BYTES : KEY_BYTES + 8], "big"),
            members=int.from_bytes(packed[-4:], "big"),
        )


def shared_ranks(keys: list[int], first_rank: int, first_offset: int) -> list[int]:
    """The ranks of consecutive groups of a ranklist with these keys (best first), the first of
    them at 0-based `first_offset` with rank `first_rank`: equal keys share a rank, and the next
    key's rank is one plus the groups before it."""
    ranks: list[int] = []
    for position, key in enumerate(keys):
        if position and key == keys[position - 1]:
            ranks.append(ranks[-1])
        else:
            ranks.append(first_rank if not position else first_offset + position + 1)
    return ranks

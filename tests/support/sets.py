"""Random members and random journal moves for the tests of the order structure (sets, tree)."""

from __future__ import annotations

import datetime as dt
import random

from solutions.leaderboard import encoding, maths


def member(rng: random.Random, pid: int) -> bytes:
    reached = maths.KEY_EPOCH + dt.timedelta(seconds=rng.randrange(10**6))
    return encoding.Member(
        maths.sort_key(rng.randrange(1, 6), reached), f"coder{pid}", pid
    ).record()


def journal_pairs(rng: random.Random, held: dict[int, bytes], make, *, ids: int, moving: int):
    """Some programmers leave, some move to another score, some arrive: one (gone, came) pair
    each, and {programmer id: record} as the pairs leave the board."""
    pairs, now = [], dict(held)
    for pid in rng.sample(range(ids), moving):
        gone = held.get(pid)
        came = None if rng.random() < 0.25 else make(rng, pid)
        if gone is None and came is None:
            continue
        pairs.append((gone, came))
        now.pop(pid, None)
        if came is not None:
            now[pid] = came
    return pairs, now

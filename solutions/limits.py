"""Rate limits: how fast one programmer may guess a problem's answer, one client address may sign
up, one service token may write, and how many emails the account pages may send. Each is a
fixed window counted in Django's cache (Redis in production, shared by every process), so a
limit costs one or two cache calls and no database write, and a refused call records nothing.

A call takes its place first and is refused when that place is past the limit (`limit_take`:
one atomic increment), so calls arriving together can never get more than the limit between
them (checking first and counting after the work let 19 of 30 concurrent wrong answers through
a limit of 10). A call that turns out not to count (a right answer, a sign-up with errors, a
mail another limit refused) gives its place back (`limit_give_back`).

A fixed window lets a burst of up to twice the limit through across a window's edge; that is
enough to stop guessing, sign-up loops, mail bombs and runaway judges, which is what these are
for. The limits fail closed: while Redis cannot be reached the cache counts in each process's
memory instead (`leaderboard_site.cache`), so each process still limits by itself, rather than
letting every call through. Without Redis at all (no REDIS_URL, for development) every process
counts by itself, which is why `check --deploy` refuses a production site without a shared
cache (`solutions.checks`).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache


@dataclass(frozen=True)
class Limit:
    """At most `allowed` calls per `seconds` for each key."""

    name: str
    allowed: int
    seconds: int


@dataclass(frozen=True)
class Taken:
    """One call's place in its window (the window's counter), to give back."""

    counter: str


class Limited(Exception):
    """Over a limit: try again in `retry_after` seconds."""

    def __init__(self, limit: Limit, retry_after: int) -> None:
        super().__init__(f"{limit.name}: over {limit.allowed} in {limit.seconds} s")
        self.limit = limit
        self.retry_after = retry_after


def wrong_answers(allowed: int | None = None) -> Limit:
    """Wrong answers per programmer and problem a minute (a competition may set its own)."""
    return Limit("wrong-answers", allowed or settings.ANSWER_WRONG_PER_MINUTE, 60)


def signups() -> Limit:
    return Limit("signups", settings.SIGNUP_PER_HOUR, 3600)


def token_writes() -> Limit:
    return Limit("token-writes", settings.SERVICE_TOKEN_WRITES_PER_SECOND, 1)


def _window(limit: Limit, key: str) -> tuple[str, int]:
    """The cache key of `key`'s current window, and the seconds left in it. Keys are hashed:
    an address or a token is no cache key, and the cache need not hold it."""
    now = int(time.time())
    start = now - now % limit.seconds
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    return f"limit:{limit.name}:{digest}:{start}", start + limit.seconds - now


def _count_one(counter: str, seconds: int) -> int:
    """Add one to the counter (made to last `seconds`) and return its new value: `add` makes
    it, `incr` adds to it, each atomic in Redis and in the memory cache alike."""
    if cache.add(counter, 1, seconds):
        return 1
    try:
        return cache.incr(counter)
    except ValueError:  # the window ended between the two calls: this is its first call
        cache.add(counter, 1, seconds)
        return 1


def limit_take(*, limit: Limit, key: str) -> Taken:
    """Take one place of `key` in this window, or raise Limited when it is past the limit (the
    refused call's place is never used: the window's count only decides refusals)."""
    counter, left = _window(limit, key)
    if _count_one(counter, left + 1) > limit.allowed:
        raise Limited(limit, max(1, left))
    return Taken(counter)


def limit_give_back(taken: Taken) -> None:
    """Give back a place a call took but did not use (nothing when its window is over)."""
    try:
        cache.decr(taken.counter)
    except ValueError:
        pass


def limit_take_all(hits: list[tuple[Limit, str]]) -> None:
    """Take one place on each (limit, key), or none: when one is used up, give back the places
    already taken and raise its Limited."""
    taken: list[Taken] = []
    try:
        for limit, key in hits:
            taken.append(limit_take(limit=limit, key=key))
    except Limited:
        for place in taken:
            limit_give_back(place)
        raise

"""Rate limits: how fast one programmer may guess a problem's answer, one client address may sign
up, and one service token may write. Each is a fixed window counted in Django's cache (Redis in
production, shared by every process; a per-process memory cache without REDIS_URL), so a limit
costs one or two cache calls and no database write, and a refused call records nothing.

A fixed window lets a burst of up to twice the limit through across a window's edge; that is
enough to stop guessing, sign-up loops and runaway judges, which is what these are for. A cache
that is down counts nothing (`leaderboard_site.cache`): the site lets calls through rather than
refuse everybody.
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


def limit_check(*, limit: Limit, key: str) -> None:
    """Raise Limited when `key` has used up `limit` in this window (counts nothing)."""
    name, left = _window(limit, key)
    if (cache.get(name) or 0) >= limit.allowed:
        raise Limited(limit, max(1, left))


def limit_count(*, limit: Limit, key: str) -> None:
    """Count one call of `key` in this window."""
    name, left = _window(limit, key)
    if not cache.add(name, 1, left + 1):
        try:
            cache.incr(name)
        except ValueError:  # the window ended between the two calls
            cache.add(name, 1, left + 1)


def limit_hit(*, limit: Limit, key: str) -> None:
    """Check, then count, one call of `key`: raise Limited past the limit (not counted then)."""
    limit_check(limit=limit, key=key)
    limit_count(limit=limit, key=key)

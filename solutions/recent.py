"""What this process read lately, kept a few seconds in its own memory (`RECENT`).

Two kinds of reads go through it. The ones every request makes that may be a second or a few
behind: the visible boards (every page's tabs and ETag), the version a board's polls go by, a
competition's standings version (`recently`). And the copies of what the shared cache keeps under
a name given to one value only: a version's rendering, a page by its ETag (`live.kept_get`). On
contest day each of them was a round trip to Redis on every request, a tenth of the web workers'
time and a sixth with the renderings read back. A process's copy is its own: another process's
change reaches it when the copy runs out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.core.cache.backends.locmem import LocMemCache

T = TypeVar("T")

RECENT = LocMemCache("solutions.recent", {"OPTIONS": {"MAX_ENTRIES": 300}})


def recently(name: str, seconds: float, read: Callable[[], T]) -> T:
    """`read()` as this process read it at most `seconds` ago."""
    value = RECENT.get(name)
    if value is None:
        value = read()
        RECENT.set(name, value, seconds)
    return value


def forget(name: str) -> None:
    """Drop this process's copy of `name` (its next read is `read()`'s)."""
    RECENT.delete(name)


def clear() -> None:
    """Drop every copy (the tests, between two tests' databases)."""
    RECENT.clear()

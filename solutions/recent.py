"""What this process read lately, kept a few seconds in its own memory (`RECENT`).

Four kinds of reads go through it. The ones every request makes that may be a second or a few
behind: the visible boards (every page's tabs and ETag) (`recently`). The versions live pages
poll by, a board's and a competition's standings', which every process must see alike
(`slot_shared`). The copies of what the shared cache keeps under a name given to one value
only: a version's rendering, a page by its ETag (`live.kept_get`). On contest day each of them
was a round trip to Redis on every request, a tenth of the web workers' time and a sixth with
the renderings read back. And what several renderings of one version read, too big to unpickle
for each of them: a competition's attempts (`latest`). A process's copy is its own: another
process's change reaches it when the copy runs out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache
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


def slot_shared(name: str, seconds: float, read: Callable[[], T]) -> T:
    """`read()` as the first process to want it in this `seconds`-long slot of the clock read
    it, handed to the others through Django's cache and kept in each process to the slot's end.
    Every process shows the same value in a slot: a version read so is rendered once for all of
    them, where a version each process read at its own moments was one more rendering, and one
    more reading of the board or the attempts, a process (four a second a board on contest day,
    and four times the standings' attempts). A value is a slot late at most."""
    now = time.time()
    slot = int(now // seconds)
    kept = RECENT.get(name)
    if kept is not None and kept[0] == slot:
        return kept[1]
    key = f"{name}@{slot}"
    value = cache.get(key)
    if value is None:
        value = read()
        if not cache.add(key, value, int(2 * seconds) + 1):
            value = cache.get(key, value)  # another process's came first: theirs for everybody
    RECENT.set(name, (slot, value), (slot + 1) * seconds - now)
    return value


_LATEST: dict[str, tuple[object, object]] = {}  # name -> (tag, value), as read last


def latest(name: str, tag: object, read: Callable[[], T]) -> T:
    """`read()` as this process last read it for `tag` (a version), kept as it is (not pickled:
    the requests of the process share one value, which none may change), the latest tag only.
    Nothing expires: `name` is one of a bounded few (one a competition), and all that changes
    (a version, a span of time) goes in `tag`."""
    kept = _LATEST.get(name)
    if kept is not None and kept[0] == tag:
        return kept[1]  # type: ignore[return-value]
    value = read()
    _LATEST[name] = (tag, value)
    return value


def forget(name: str) -> None:
    """Drop this process's copy of `name` (its next read is `read()`'s)."""
    RECENT.delete(name)


def clear() -> None:
    """Drop every copy (the tests, between two tests' databases)."""
    RECENT.clear()
    _LATEST.clear()

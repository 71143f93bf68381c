"""Board versions: how a live page learns, with one small read, that nothing changed.

Every write that changes a board (a counted solve, a rebuild, a programmer hidden or restored)
bumps that board's counter: one document per board in ``board_versions``, ``{_id: <board slug>,
v: n}``, so boards written at once do not contend for one document. A live page's ETag hashes the
counter with everything else the page depends on (the day, the page, the filters, the viewer),
so a poll answers 304 until a solve lands, then 200 with the new rows and a new ETag.

Pages read the counters through Django's cache (`board_version_cached`), so a burst of polls
costs one MongoDB read a second rather than one each; and what a version shows is rendered once
(`rendered_once`: a board's rows, a competition's standings), not once a poll.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import TypeVar

from django.core.cache import cache
from django.http import HttpRequest
from pymongo import UpdateOne

from . import mongo, recent
from .models import Board

T = TypeVar("T")

# How long a page may use a counter read from Django's cache. A touch drops the cached counters,
# so on a shared cache (Redis in production) every process sees a change at once. A process with
# a cache of its own (no REDIS_URL), or one that read the counter just before the touch, may keep
# the old version for up to this long: its live pages show a solve within a second, at worst one
# poll later. (Django's Redis cache counts whole seconds.)
CACHED_VERSION_SECONDS = 1


def boards_touch(slugs: Iterable[str] | None = None) -> None:
    """Record that these boards changed (every board when `slugs` is None)."""
    if slugs is None:
        slugs = Board.objects.values_list("slug", flat=True)
    slugs = list(slugs)
    if slugs:
        mongo.write_together(board_versions_writes(slugs))
        board_versions_forget(slugs)


def board_versions_writes(slugs: Iterable[str]) -> list[UpdateOne]:
    """The writes that bump these boards' versions, to send with others (`mongo.write_together`);
    `board_versions_forget` once they are written."""
    where = mongo.namespace(mongo.board_versions())
    return [
        UpdateOne({"_id": slug}, {"$inc": {"v": 1}}, upsert=True, namespace=where) for slug in slugs
    ]


def board_versions_forget(slugs: Iterable[str]) -> None:
    """Drop this process's cached versions of these boards (just bumped)."""
    cache.delete_many([_cache_key(slug) for slug in slugs])


# How long the polls of live pages keep a version: they see a board's changes once a second of
# the clock, every process the same version (`recent.slot_shared`), and a touch does not drop
# it. On contest day solves land many times a second, each one a new version, and each new
# version a new reading and rendering of every page being watched; a page polled every 3 s
# shows a solve at most a second later.
POLLED_VERSION_SECONDS = 1


def board_version(slug: str) -> int:
    """How many times the board has changed (one `_id` read)."""
    document = mongo.board_versions().find_one({"_id": slug}) or {}
    return document.get("v", 0)


def board_version_cached(slug: str, read: Callable[[], int] | None = None) -> int:
    """The board's version as pages use it: from Django's cache, read from MongoDB at most once
    every `CACHED_VERSION_SECONDS` (and again at once after a touch). `read`: how to read it
    (a request that needs it twice passes one read)."""
    key = _cache_key(slug)
    version = cache.get(key)
    if version is None:
        version = read() if read else board_version(slug)
        cache.set(key, version, CACHED_VERSION_SECONDS)
    return version


def board_version_polled(slug: str, read: Callable[[], int] | None = None) -> int:
    """The board's version as the polls of live pages see it: read once a second of the clock
    for every process (`recent.slot_shared`), not dropped by a touch (see
    POLLED_VERSION_SECONDS). Whole pages use `board_version_cached`."""
    return recent.slot_shared(
        f"board-version-polled:{slug}",
        POLLED_VERSION_SECONDS,
        read or (lambda: board_version(slug)),
    )


def _cache_key(slug: str) -> str:
    return f"board-version:{slug}"


def board_versions(slugs: Iterable[str]) -> dict[str, int]:
    """The versions of several boards in one read (profiles show every board)."""
    found = mongo.board_versions().find({"_id": {"$in": list(slugs)}})
    return {document["_id"]: document["v"] for document in found}


def etag(*parts: object) -> str:
    """A strong ETag value (without quotes: Django's `condition` adds them) of these parts."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


# --- what a version shows, rendered once -----------------------------------------------------

# How long the others wait for one rendering of a new version before they render it too.
RENDERING_SECONDS = 10
# How long a process keeps its copy of what it read from the shared cache (`kept_get`): a version
# of a watched board lasts about a second on contest day, so a few seconds keep every poll of it.
RECENT_SECONDS = 5


def rendered_once(
    request: HttpRequest, key: str, version: int, render: Callable[[], T], *, seconds: int
) -> T:
    """What `render()` makes of `key` (all a fragment depends on but the version) at `version`,
    made once and kept `seconds` in Django's cache: the polls of one page share one rendering.

    One request renders a new version; the others meanwhile serve the latest rendering of `key`,
    or dozens of polls arriving in the same second would all render the same fragment. Such a
    request shows an older version than its ETag says (`shows_older`): its response must carry
    no ETag, nor be kept as that ETag's page (`etags.live_page` drops it).

    A rendering is also kept a few seconds in this process's memory (`kept_get`): the polls of
    a watched page arrive many times a second in each process, and each read its rendering from
    the shared cache (a round trip and 15 to 300 KB on contest day). A key and version name one
    rendering, so a copy is never another's."""
    name = f"{key}:{version}"
    if (rendered := kept_get(name)) is not None:
        return rendered
    if not cache.add(f"{key}:{version}:rendering", True, RENDERING_SECONDS):
        if (latest := cache.get(f"{key}:latest")) is not None:
            latest_version, rendered = latest
            if latest_version < version:
                request.__dict__[_SHOWS_OLDER] = True
            return rendered
    rendered = render()
    kept_set(name, rendered, seconds)
    cache.set(f"{key}:latest", (version, rendered), seconds)
    return rendered


def kept_get(name: str) -> object | None:
    """What the shared cache keeps under `name`, a name given to one value only (a version's
    rendering, a page by its ETag): from this process's copy while it has one (`recent.RECENT`)."""
    return recent.recently(name, RECENT_SECONDS, lambda: cache.get(name))


def kept_set(name: str, value: object, seconds: int) -> None:
    """Keep `value` under `name` (see `kept_get`) `seconds` in the shared cache, and a few in
    this process."""
    cache.set(name, value, seconds)
    recent.RECENT.set(name, value, min(seconds, RECENT_SECONDS))


_SHOWS_OLDER = "_live_shows_older"


def shows_older(request: HttpRequest) -> bool:
    """Whether this request served a rendering older than the version it read (see
    `rendered_once`)."""
    return request.__dict__.get(_SHOWS_OLDER, False)

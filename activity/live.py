"""Board versions and ETags: how a live page learns, with one small read, that nothing changed.

Every write that changes a board (a counted solve, a rebuild, a programmer hidden or restored)
bumps that board's counter in ``board_versions``. A live page's ETag hashes the counter with
everything else the page depends on (the day, the page, the filters, the viewer), so a poll
answers 304 until a solve lands, then 200 with the new rows and a new ETag.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from . import mongo

VERSIONS_ID = "boards"


def boards_touch(slugs: Iterable[str] | None = None) -> None:
    """Record that these boards changed (every board when `slugs` is None)."""
    if slugs is None:
        from solutions.models import Board

        slugs = Board.objects.values_list("slug", flat=True)
    # Board slugs are validated SlugFields: safe as field names.
    increments = {f"v.{slug}": 1 for slug in slugs}
    if increments:
        mongo.board_versions().update_one({"_id": VERSIONS_ID}, {"$inc": increments}, upsert=True)


def board_version(slug: str) -> int:
    """How many times the board has changed (one small read)."""
    document = mongo.board_versions().find_one({"_id": VERSIONS_ID}, {f"v.{slug}": 1}) or {}
    return document.get("v", {}).get(slug, 0)


def etag(*parts: object) -> str:
    """A strong ETag value (without quotes: Django's `condition` adds them) of these parts."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]

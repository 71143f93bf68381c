"""Board versions: how a live page learns, with one small read, that nothing changed.

Every write that changes a board (a counted solve, a rebuild, a programmer hidden or restored)
bumps that board's counter: one document per board in ``board_versions``, ``{_id: <board slug>,
v: n}``, so boards written at once do not contend for one document. A live page's ETag hashes the
counter with everything else the page depends on (the day, the page, the filters, the viewer),
so a poll answers 304 until a solve lands, then 200 with the new rows and a new ETag.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from pymongo import UpdateOne

from . import mongo
from .models import Board


def boards_touch(slugs: Iterable[str] | None = None) -> None:
    """Record that these boards changed (every board when `slugs` is None)."""
    if slugs is None:
        slugs = Board.objects.values_list("slug", flat=True)
    operations = [UpdateOne({"_id": slug}, {"$inc": {"v": 1}}, upsert=True) for slug in slugs]
    if operations:
        mongo.board_versions().bulk_write(operations, ordered=False)


def board_version(slug: str) -> int:
    """How many times the board has changed (one `_id` read)."""
    document = mongo.board_versions().find_one({"_id": slug}) or {}
    return document.get("v", 0)


def board_versions(slugs: Iterable[str]) -> dict[str, int]:
    """The versions of several boards in one read (profiles show every board)."""
    found = mongo.board_versions().find({"_id": {"$in": list(slugs)}})
    return {document["_id"]: document["v"] for document in found}


def etag(*parts: object) -> str:
    """A strong ETag value (without quotes: Django's `condition` adds them) of these parts."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]

"""The MongoDB side: one client per process, the collections, and every index in one place.

Collections:
- ``submissions``: every attempt with its verdict (the audit trail).
- ``solves``: the first accepted solve of each (programmer, problem); a unique key makes it count
  once. The source of truth: every board can be rebuilt from it.
- the engine's collections (``entries.<board>``, ``histograms``, ``tops``): see
  `leaderboard.store`, which alone names them.
- ``requests``: API idempotency keys and their first answers.
- ``board_versions``: one counter per board, bumped by every change (see `live`).
"""

from __future__ import annotations

import os
import threading

from django.conf import settings
from pymongo import ASCENDING, DESCENDING, IndexModel, MongoClient
from pymongo.collection import Collection
from pymongo.database import Database

_client: MongoClient | None = None
_client_pid: int | None = None
_lock = threading.Lock()


def get_client() -> MongoClient:
    """The process's client, made on first use (pymongo is not fork-safe: never at import time)."""
    global _client, _client_pid
    with _lock:
        if _client is None or _client_pid != os.getpid():
            _client = MongoClient(settings.MONGODB_URI, tz_aware=True, connect=False)
            _client_pid = os.getpid()
        return _client


def set_client(client: MongoClient | None) -> None:
    """Use another client (tests point this at the embedded server or mongomock)."""
    global _client, _client_pid
    with _lock:
        _client, _client_pid = client, (os.getpid() if client is not None else None)


def get_db() -> Database:
    return get_client()[settings.MONGODB_DB]


def submissions() -> Collection:
    return get_db()["submissions"]


def solves() -> Collection:
    return get_db()["solves"]


def requests() -> Collection:
    return get_db()["requests"]


def board_versions() -> Collection:
    return get_db()["board_versions"]


def fixed_indexes() -> dict[str, list[IndexModel]]:
    return {
        "submissions": [
            IndexModel([("programmer_id", ASCENDING), ("submitted_at", DESCENDING)]),
            IndexModel([("submitted_at", DESCENDING)]),
            # Competition standings read one competition's attempts in time order.
            IndexModel([("competitions", ASCENDING), ("submitted_at", ASCENDING)]),
        ],
        # Idempotency keys outlive any retry worth answering: a solve older than the late
        # limit (30 days by default) is refused anyway.
        "requests": [IndexModel([("claimed_at", ASCENDING)], expireAfterSeconds=45 * 86400)],
        "solves": [
            IndexModel([("programmer_id", ASCENDING), ("problem", ASCENDING)], unique=True),
            IndexModel([("solved_at", ASCENDING)]),
            IndexModel([("applied", ASCENDING)], partialFilterExpression={"applied": False}),
        ],
    }


def ensure_indexes(board_slugs: list[str]) -> list[str]:
    """Create every index (idempotent: existing ones are left as they are). Returns their names."""
    db = get_db()
    created = []
    for name, models in fixed_indexes().items():
        created += [f"{name}.{index}" for index in db[name].create_indexes(models)]
    from .leaderboard import store  # the engine declares its own collections' indexes

    for name, models in store.indexes(board_slugs).items():
        created += [f"{name}.{index}" for index in db[name].create_indexes(models)]
    return created

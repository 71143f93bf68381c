"""The locks that keep each board's jobs single (a history snapshot, an alerts check), held in
MongoDB on the server's clock, so a job killed half-way holds its lock only until it expires."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from pymongo.errors import DuplicateKeyError

from .. import mongo

LOCK_TTL = dt.timedelta(minutes=5)

_MILLISECOND = dt.timedelta(milliseconds=1)


@contextmanager
def job_lock(name: str, ttl: dt.timedelta = LOCK_TTL) -> Iterator[bool]:
    """Hold the lock `name` for the block; yields False when somebody else holds it.

    One document per lock: taking it is an upsert that only matches an expired lock, so while
    it is held the upsert collides on `_id` and fails. A worker killed mid-job leaves the lock
    behind, but only until it expires."""
    token = uuid.uuid4().hex
    server_now = {"$toLong": "$$NOW"}  # the server's clock, whatever this machine's says
    expired = {"$lte": [{"$toLong": {"$ifNull": ["$expires_at", 0]}}, server_now]}
    try:
        mongo.locks().update_one(
            {"_id": name, "$expr": expired},
            [{"$set": {"owner": token, "expires_at": {"$add": ["$$NOW", ttl // _MILLISECOND]}}}],
            upsert=True,
        )
        acquired = True
    except DuplicateKeyError:
        acquired = False
    try:
        yield acquired
    finally:
        if acquired:
            mongo.locks().delete_one({"_id": name, "owner": token})

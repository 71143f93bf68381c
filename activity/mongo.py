"""The activity collections on MongoDB, and their indexes (each bounded by a TTL or a cap).

- ``rank_history``: one document per (board, programmer, day), ``_id "<slug>:<pid>:<day>"``,
  holding that day's rank (the final one once the day is over). Read by ``_id`` for a chart's
  days; expired ``ACTIVITY_HISTORY_DAYS`` after its day.
- ``rank_samples``: one document per (board, watched programmer), ``_id "<slug>:<pid>"``, with
  the last rank seen and the recent rank *changes* (at most `MAX_CHANGES`): the rank at any
  moment of the last day is the last change before it. Expired when nobody watches any more.
- ``notifications``: in-app notifications. ``_id`` is the alert's dedupe key, so an alert
  computed twice (a retry, a crash, a second run) is stored once.
- ``locks``: one document per running job (``_id`` its name) with an expiry, so a crashed
  worker's lock frees itself.
- ``activity_state``: per board, what the history snapshots have already recorded.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.collection import Collection

from solutions import mongo as solutions_mongo
from solutions.mongo import get_db

MAX_CHANGES = 100
SAMPLES_KEPT = dt.timedelta(days=2)  # longer than the longest alert window (a day)


def rank_history() -> Collection:
    return get_db()["rank_history"]


def rank_samples() -> Collection:
    return get_db()["rank_samples"]


def notifications() -> Collection:
    return get_db()["notifications"]


def locks() -> Collection:
    return get_db()["locks"]


def state() -> Collection:
    return get_db()["activity_state"]


def indexes() -> dict[str, list[IndexModel]]:
    return {
        "rank_history": [IndexModel([("expires_at", ASCENDING)], expireAfterSeconds=0)],
        "rank_samples": [
            IndexModel(
                [("updated_at", ASCENDING)],
                expireAfterSeconds=int(SAMPLES_KEPT.total_seconds()),
            )
        ],
        "notifications": [
            IndexModel([("user_id", ASCENDING), ("created_at", DESCENDING)]),
            IndexModel(
                [("user_id", ASCENDING)],
                name="unread",
                partialFilterExpression={"read": False},
            ),
            IndexModel(
                [("created_at", ASCENDING)],
                expireAfterSeconds=settings.ACTIVITY_NOTIFICATIONS_DAYS * 86400,
            ),
        ],
        "locks": [IndexModel([("expires_at", ASCENDING)], expireAfterSeconds=0)],
    }


def register() -> None:
    """Join the one index registry (`solutions.mongo`): the command applies every index, and
    each process makes the expiries before its first use of the database."""
    solutions_mongo.indexes_declare(indexes)

"""A competition's attempts as MongoDB keeps them (the `submissions` of `solutions`, tagged with
the competitions they count in; `mongo.py` indexes them): every attempt in time order, once a
version of the standings for every rendering of it, and a programmer's own."""

from __future__ import annotations

from django.core.cache import cache
from pymongo import ASCENDING

from solutions import mongo, recent
from solutions.models import Programmer

from . import standings
from .models import Competition


def every(*, competition: Competition) -> list[standings.Attempt]:
    """Every attempt recorded for the competition inside its window, in time order."""
    cursor = (
        mongo.submissions()
        .find(
            {
                "competitions": competition.slug,
                "submitted_at": {"$gte": competition.start, "$lt": competition.end},
            },
            {"programmer_id": 1, "problem": 1, "verdict": 1, "submitted_at": 1},
        )
        .sort([("submitted_at", ASCENDING), ("_id", ASCENDING)])
    )
    return [
        standings.Attempt(
            programmer_id=doc["programmer_id"],
            problem=doc["problem"],
            accepted=doc["verdict"] == "accepted",
            at=doc["submitted_at"],
        )
        for doc in cursor
    ]


# How long the cache keeps a version's attempts for the other processes (`at_version`).
VERSION_ATTEMPTS_SECONDS = 30


def at_version(*, competition: Competition, version: int) -> list[standings.Attempt]:
    """Every attempt, as read for this version of the standings (`selectors.competition_version`):
    once a version for every rendering of it in every process (each page of the public table,
    the page of every row, each participant's own table past the freeze), kept in each process
    (`recent.latest`) and handed to the others through the cache. Each read is every attempt of
    the competition: 0.4 s of the embedded server's CPU at 7,000, and on contest day they were
    a tenth of its time. The attempts read for a version may hold a few recorded after it was
    read: the next version reads them again."""
    name = f"standings-attempts:{competition.pk}:{competition.slug}"

    def shared() -> list[standings.Attempt]:
        key = f"{name}:{version}"
        attempts = cache.get(key)
        if attempts is None:
            attempts = every(competition=competition)
            cache.set(key, attempts, VERSION_ATTEMPTS_SECONDS)
        return attempts

    return recent.latest(name, version, shared)


def own(*, competition: Competition, programmer: Programmer | None) -> list[dict]:
    """A programmer's own attempts in the competition, newest first (they always see these)."""
    if programmer is None:
        return []
    return list(
        mongo.submissions()
        .find(
            {"competitions": competition.slug, "programmer_id": programmer.pk},
            {"problem": 1, "verdict": 1, "submitted_at": 1},
        )
        .sort("submitted_at", -1)
    )

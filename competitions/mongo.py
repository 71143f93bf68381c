"""The MongoDB indexes competitions read by. Competitions keep no collection of their own: their
standings are read from the `submissions` of `solutions`, tagged with the competitions they count
for."""

from __future__ import annotations

from pymongo import ASCENDING, IndexModel

from solutions import mongo as solutions_mongo


def indexes() -> dict[str, list[IndexModel]]:
    return {
        # Standings read one competition's attempts in time order.
        "submissions": [IndexModel([("competitions", ASCENDING), ("submitted_at", ASCENDING)])],
    }


def register() -> None:
    solutions_mongo.indexes_declare(indexes)

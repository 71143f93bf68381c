"""Faults as the hunts make them: pymongo's write commands wrapped (to stop one, or to freeze
before it), and orders small enough that a few dozen solves split, fold and cut them."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterable
from unittest import mock

from pymongo import MongoClient
from pymongo.collection import Collection

from solutions.leaderboard import journals, orders, sets, tree

WRITES = (
    "bulk_write",
    "update_one",
    "update_many",
    "replace_one",
    "insert_one",
    "insert_many",
    "delete_one",
    "delete_many",
    "find_one_and_update",
)


@contextlib.contextmanager
def commands_wrapped(names: Iterable[str], wrap, together=None):
    """pymongo's `Collection` methods of `names` each replaced by `wrap(name, the real one)`, and
    the client's `bulk_write` (writes to several collections at once, `mongo.write_together`) by
    `together(the real one)` when given."""
    with contextlib.ExitStack() as stack:
        for name in names:
            real = getattr(Collection, name)
            stack.enter_context(mock.patch.object(Collection, name, wrap(name, real)))
        if together is not None:
            real = MongoClient.bulk_write
            stack.enter_context(mock.patch.object(MongoClient, "bulk_write", together(real)))
        yield


def small_orders(monkeypatch, chance: random.Random) -> None:
    """Small sets, nodes and journals drawn by `chance`, so that a few dozen solves split, fold
    and cut them often."""
    monkeypatch.setattr(sets, "SET_MAX", chance.choice([2, 4, 8]))
    monkeypatch.setattr(sets, "SET_FILL", 2)
    monkeypatch.setattr(sets, "ARRIVALS_MAX", chance.choice([0, 2, 8]))
    monkeypatch.setattr(sets, "GONE_MAX", chance.choice([1, 2, 48]))
    monkeypatch.setattr(orders, "INLINE_MAX", chance.choice([0, 2]))
    monkeypatch.setattr(journals, "JOURNAL_MAX", chance.choice([0, 2, 8]))
    monkeypatch.setattr(tree, "NODE_MAX", chance.choice([2, 4]))
    monkeypatch.setattr(tree, "NODE_FILL", 2)

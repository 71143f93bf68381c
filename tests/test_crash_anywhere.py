"""Solves stopped at any write: the storage goes away before or after a random write command of
a solve (the entry, the journals, a fold's sets, nodes and roots, the records of what the orders
hold, the lease), the way a killed worker or a killed server leaves it. Later solves and
the repair task carry on, and every order ends up holding every entry once, as a brute-force
reading of the entries says."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import random
from collections.abc import Iterable
from unittest import mock

import pytest
from pymongo import MongoClient
from pymongo.collection import Collection
from pymongo.errors import AutoReconnect

from solutions import services
from solutions.leaderboard import journals, orders, sets, tree
from solutions.models import Problem
from tests.conftest import NOW, lease_run_out, make_programmer
from tests.test_engine import orders_hold_the_entries

SEEDS = int(os.environ.get("CRASH_SEEDS", "12"))  # more for a long hunt: CRASH_SEEDS=200
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


class StorageLost:
    """Count write commands; the storage goes away at the `at`-th one, before the server gets it
    or right after it did it (the answer lost). A command of writes to several collections
    stops after a random number of them (`done`: a server killed in its middle)."""

    def __init__(self, at: int, after: bool, done: random.Random) -> None:
        self.at, self.after, self.count, self.done = at, after, 0, done

    def armed(self):
        return commands_wrapped(
            WRITES, lambda _name, real: self._wrapped(real), together=self._together
        )

    def _together(self, real):
        lost = self

        def write(client, models, *args, **kwargs):
            lost.count += 1
            if lost.count != lost.at:
                return real(client, models, *args, **kwargs)
            done = models[: lost.done.randrange(len(models) + 1)]
            if lost.after and done:
                real(client, done, *args, **kwargs)
            raise AutoReconnect("connection to the server was lost")

        return write

    def _wrapped(self, real):
        lost = self

        def write(collection, *args, **kwargs):
            lost.count += 1
            if lost.count != lost.at:
                return real(collection, *args, **kwargs)
            if lost.after:
                real(collection, *args, **kwargs)
            raise AutoReconnect("connection to the server was lost")

        return write


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


@pytest.mark.parametrize("seed", range(SEEDS))
def test_solves_stopped_at_any_write_leave_every_order_holding_every_entry_once(
    mongodb, now, boards, monkeypatch, seed
):
    chance = random.Random(seed)
    small_orders(monkeypatch, chance)
    people = [make_programmer(f"p{n:02d}") for n in range(10)]
    problems = [Problem.objects.create(slug=f"c{i}", title=f"C{i}", answer="1") for i in range(6)]
    for _solve in range(40):
        programmer, problem = chance.choice(people), chance.choice(problems)
        solved_at = NOW - dt.timedelta(days=chance.randrange(4), minutes=chance.randrange(600))
        lost = StorageLost(at=chance.randrange(1, 30), after=chance.random() < 0.5, done=chance)
        try:
            with lost.armed():
                services.solve_record(programmer=programmer, problem=problem, solved_at=solved_at)
        except AutoReconnect:
            # A killed worker's lease runs out before anybody else can take it.
            lease_run_out()
    now.shift(dt.timedelta(minutes=5))
    services.solves_repair()
    today = services.today()
    for board in boards.values():
        orders_hold_the_entries(board, range(today - 4, today + board.spec.span))

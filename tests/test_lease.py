"""The applier's lease through a dead holder, a machine whose clock is off, a crowd pending at
once and a write the storage refuses: no stall past a few seconds, no 201 for a solve not
applied, no journal outgrowing a document, no refused write taken for a conflict."""

from __future__ import annotations

import datetime as dt
import random
import time

import bson
import pytest
from pymongo import UpdateOne
from pymongo.errors import BulkWriteError

from solutions import clock, mongo, services
from solutions.leaderboard import applier, entries, journals, lease, orders
from solutions.leaderboard.entries import from_solves
from solutions.leaderboard.entries.from_solves import entry_from_solves
from solutions.models import Problem
from tests.conftest import NOW
from tests.support.engine import orders_hold_the_entries


def test_a_holder_that_died_stalls_the_next_solve_a_lease_at_most(mongodb, now, boards, alice):
    """A worker took the lease and was killed: the next solve waits for the lease to run out on
    the server's clock (seconds, not the 30 a long lease took), takes it and is applied."""
    problem = Problem.objects.create(slug="a", title="A", answer="1")
    assert lease.take("killed worker", [])[0]
    started = time.monotonic()
    services.solve_record(programmer=alice, problem=problem, solved_at=NOW)
    waited = time.monotonic() - started
    assert lease.LEASE_SECONDS * 0.5 < waited < lease.LEASE_SECONDS * 3
    assert mongodb.solves.find_one({"programmer_id": alice.pk})["applied"] is True


@pytest.mark.parametrize("skew", [dt.timedelta(seconds=-15), dt.timedelta(seconds=15)])
def test_a_machine_whose_clock_is_off_neither_takes_a_live_lease_nor_answers_201(
    mongodb, now, boards, alice, monkeypatch, skew
):
    """This machine's clock is 15 s behind or ahead (and the tests' pinned clock years away):
    a lease another worker holds stays its own until it runs out on the server's clock, and a
    solve that could not wait that long is refused as behind, never answered as applied."""
    monkeypatch.setattr(applier, "APPLY_WAIT_SECONDS", 0.5)
    problem = Problem.objects.create(slug="a", title="A", answer="1")
    now.shift(skew)
    assert lease.take("another worker", [])[0]
    with pytest.raises(applier.OrdersBehind):
        services.solve_record(programmer=alice, problem=problem, solved_at=NOW)
    assert mongodb.solves.find_one({"programmer_id": alice.pk})["applied"] is False
    assert lease.appliers().find_one({"_id": lease.LEASE})["token"] == "another worker"


@pytest.mark.slow
def test_2500_programmers_pending_at_once_are_placed_in_bounded_batches(
    mongodb, now, boards, monkeypatch
):
    """2,500 programmers with a country and an organization each, counted in their entries while
    nobody moved the orders (a crowd behind a stuck lease), are placed by the next holder in
    batches of at most BATCH_PROGRAMMERS, every journal far below a document's 16 MB, and every
    order equals the entries (the brute force)."""
    chance = random.Random(7)
    today = clock.today()
    crowd = [
        from_solves.Identity(
            10_000 + n,
            f"crowd{n:04d}",
            (f"country:{chance.choice(['BD', 'IN', 'NP'])}", f"org:Org {chance.randrange(40)}"),
        )
        for n in range(2500)
    ]
    solves = {
        who: [
            {"points": 1, "solved_at": NOW - dt.timedelta(days=chance.randrange(10), hours=day)}
            for day in range(chance.randrange(1, 3))
        ]
        for who in crowd
    }
    for board in boards.values():
        counted = [  # as the solves' updates leave them, the orders not told yet (rev 1)
            entry_from_solves(board.spec, board.value_of, who, solves[who], today, "UTC")
            | {"rev": 1}
            for who in crowd
        ]
        entries.entries(board.slug).insert_many(counted)
    listed = [lease.item(b, who.programmer_id, "crowd") for b in boards for who in crowd]
    # As their requests listed them, one by one (all at once, `$addToSet` would take a minute).
    lease.appliers().update_one({"_id": lease.LEASE}, {"$set": {"pending": listed}}, upsert=True)
    batches, largest_journal = [], 0
    real_apply = applier._orders_apply

    def apply_watched(wanted, heads):
        nonlocal largest_journal
        batches.append(len({pid for _board, pid in wanted}))
        writes = real_apply(wanted, heads)
        for board in boards:  # as a fold left them
            largest_journal = max(largest_journal, len(bson.encode(journals.journal_read(board))))
        for write in writes:  # the journals' updates the batch writes next
            if isinstance(write, UpdateOne):
                largest_journal = max(largest_journal, len(bson.encode(write._doc)))
        return writes

    monkeypatch.setattr(applier, "_orders_apply", apply_watched)
    windows = {board.slug: board.spec for board in boards.values()}
    applier.orders_catch_up(boards=windows, finish=services.orders_moved)
    assert sum(batches) == 2500 and max(batches) == applier.BATCH_PROGRAMMERS
    assert largest_journal < 4 * 1024 * 1024
    assert lease.appliers().find_one({"_id": lease.LEASE})["pending"] == []
    for board in boards.values():
        orders_hold_the_entries(board, range(today - 10, today + 2))


def test_a_write_the_storage_refuses_is_a_storage_fault_not_a_conflict(
    mongodb, now, boards, alice, monkeypatch
):
    """A journal the server refuses (too large, say: code 10334) is no conflict between
    appliers to wait out and retry forever: the solve is answered 503 with Retry-After, the
    refusal is logged, and the solve stays pending for a retry once the cause is gone."""
    problem = Problem.objects.create(slug="a", title="A", answer="1")
    real_orders = orders.orders

    class Refusing:
        """The orders collection, whose server refuses every bulk write."""

        def __getattr__(self, name):
            return getattr(real_orders(), name)

        def bulk_write(self, *_args, **_kwargs):
            error = {"index": 0, "code": 10334, "errmsg": "object to insert too large"}
            raise BulkWriteError({"writeErrors": [error]})

    monkeypatch.setattr(orders, "orders", Refusing)
    with pytest.raises(mongo.StorageRefused):
        services.solve_record(programmer=alice, problem=problem, solved_at=NOW)
    assert mongo.is_transient(mongo.StorageRefused("refused"))
    assert mongodb.solves.find_one({"programmer_id": alice.pk})["applied"] is False
    monkeypatch.setattr(orders, "orders", real_orders)
    services.solves_repair()
    assert mongodb.solves.find_one({"programmer_id": alice.pk})["applied"] is True

"""`manage.py rebuild_boards --verify`: every board day's order lists exactly the members the
seed's sorted per-day query finds in the entries, in the same order, ties included; an order
that lost a member or an entry that changed under it is reported, and the check fails."""

from __future__ import annotations

import datetime as dt
import random
import re
from io import StringIO

import pytest
import time_machine
from django.core.management import CommandError, call_command

from solutions import leaderboard, services
from solutions.leaderboard import encoding, entries, journals, orders, reading, sets, tree, verify
from solutions.models import Problem
from tests.conftest import NOW

TODAY = leaderboard.epoch_day(NOW, "UTC")


@pytest.fixture
def small_orders(monkeypatch):
    """Sets of 3 in nodes of 3, folded often: orders of many sets and several levels."""
    monkeypatch.setattr(sets, "SET_MAX", 3)
    monkeypatch.setattr(sets, "SET_FILL", 2)
    monkeypatch.setattr(sets, "ARRIVALS_MAX", 2)
    monkeypatch.setattr(orders, "INLINE_MAX", 1)
    monkeypatch.setattr(tree, "NODE_MAX", 3)
    monkeypatch.setattr(tree, "NODE_FILL", 2)
    monkeypatch.setattr(journals, "JOURNAL_MAX", 40)


@pytest.fixture
def judged(mongodb, boards_of_every_kind, alice, bob, charlie):
    """Four days of judging with the clock pinned, on-time and late: Alice (BD, BUET), Bob (IN)
    and a dozen others solve; Amy and Zed solve the same problems at the same moments, so they
    tie on every day; Charlie solves nothing."""
    rng = random.Random(22)
    others = [
        services.programmer_create(user=None, handle=f"coder{n}", country=rng.choice(["BD", ""]))
        for n in range(10)
    ]
    # Zed first: a lower id, listed after Amy all the same (ties go by handle before id).
    zed, amy = (
        services.programmer_create(user=None, handle=h, country="BD") for h in ("Zed", "amy")
    )
    problems = Problem.objects.bulk_create(
        Problem(slug=f"v{i}", title=f"V{i}", points=rng.choice([10, 30])) for i in range(8)
    )
    for day in range(TODAY - 3, TODAY + 1):
        moment = NOW - dt.timedelta(days=TODAY - day)
        with time_machine.travel(moment, tick=False):
            for _ in range(6):
                late = dt.timedelta(days=rng.choice([0, 0, 1, 3]), minutes=rng.randrange(300))
                services.solve_record(
                    programmer=rng.choice([alice, bob, *others]),
                    problem=rng.choice(problems),
                    solved_at=moment - late,
                )
            for twin in (amy, zed):
                services.solve_record(programmer=twin, problem=problems[day % 8], solved_at=moment)
    return boards_of_every_kind


def verified(*options: str) -> str:
    out = StringIO()
    call_command("rebuild_boards", "--verify", *options, stdout=out)
    return out.getvalue()


def failed_verify() -> str:
    out = StringIO()
    with pytest.raises(CommandError, match="differ from their entries"):
        call_command("rebuild_boards", "--verify", stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("orders_of", ["sets of 1024", "sets of 3 in nodes of 3"])
def test_every_order_agrees_with_the_seeds_query(orders_of, request, judged, now):
    if orders_of != "sets of 1024":
        request.getfixturevalue("small_orders")
    out = verified()
    for slug in judged:
        assert f"{slug}: " in out and " agree." in out.split(f"{slug}: ")[1].splitlines()[0]
    assert f"Every order of {len(judged)} board(s) agrees." in out
    report = verify.board_verify("last-7-days")
    assert report.agrees and report.members > 0
    assert (str(TODAY), "") in report.compared and (str(TODAY), "country:BD") in report.compared
    assert (str(TODAY), "org:BUET") in report.compared
    assert not any(scope.startswith("groups:") for _day, scope in report.compared)


def test_the_query_lists_ties_as_the_order_does(judged, now):
    listed = list(reading.members_in_order("last-7-days", str(TODAY), "country:BD"))
    assert list(entries.entries_by_key("last-7-days", str(TODAY), "country:BD")) == listed
    twins = [m for m in listed if m.handle in ("amy", "Zed")]
    assert [m.handle for m in twins] == ["amy", "Zed"]  # equal keys, by lower-case handle
    assert twins[0].key == twins[1].key
    assert listed.index(twins[1]) == listed.index(twins[0]) + 1


def test_one_board_can_be_verified_alone(judged, now):
    out = verified("--board", "all-time")
    assert "all-time: " in out and "last-7-days" not in out
    assert "Every order of 1 board(s) agrees." in out


def test_entries_changed_under_the_orders_are_reported_and_the_check_fails(judged, now):
    day = str(TODAY)
    on_the_day = entries.entries("last-7-days").find({f"keys.{day}": {"$gt": 0}}).sort("_id", 1)
    promoted, dropped = list(on_the_day)[:2]
    best = max(entries.entries_by_key("last-7-days", day), key=lambda m: m.key)
    entries.entries("last-7-days").update_one(
        {"_id": promoted["_id"]}, {"$set": {f"keys.{day}": best.key + 1}}
    )
    entries.entries("last-7-days").update_one(
        {"_id": dropped["_id"]}, {"$unset": {f"keys.{day}": ""}}
    )
    out = failed_verify()
    assert "last-7-days: " in out and "all-time: 0" not in out
    assert f"{promoted['handle']} (id {promoted['_id']}) misplaced" in out
    assert f"{dropped['handle']} (id {dropped['_id']}) extra" in out
    found = verify.board_verify("last-7-days").differences
    # One difference for each of them in each order they are in: everybody and their groups.
    scopes = {entry["_id"]: ["", *entry["groups"]] for entry in (promoted, dropped)}
    assert sorted((d.kind, d.scope) for d in found) == sorted(
        [("misplaced", scope) for scope in scopes[promoted["_id"]]]
        + [("extra", scope) for scope in scopes[dropped["_id"]]]
    )
    everybody = next(d for d in found if d.kind == "misplaced" and d.scope == "")
    assert (everybody.expected, everybody.wanted.key) == (0, best.key + 1)  # first by its entry


def test_an_order_that_lost_a_member_reports_them_missing(small_orders, judged, now):
    call_command("rebuild_boards", stdout=StringIO())  # every order in sets, none in a journal
    assert f"Every order of {len(judged)} board(s) agrees." in verified()
    order = orders.order_id("last-30-days", str(TODAY), "country:BD")
    of_the_order = {"$regex": f"^{re.escape(order)}\\|"}
    a_set = orders.order_sets().find_one({"_id": of_the_order, "r": {"$exists": 1}})  # not a node
    lost = encoding.Member.from_record(bytes(a_set["r"])[: encoding.RECORD_BYTES])
    orders.order_sets().update_one(
        {"_id": a_set["_id"]}, {"$set": {"r": bytes(a_set["r"])[encoding.RECORD_BYTES :]}}
    )
    out = failed_verify()
    assert f"{lost.handle} (id {lost.programmer_id}) missing" in out
    assert "last-30-days: 1 difference(s)" in out
    assert "Every order" not in out


def test_one_moved_member_is_one_difference():
    a, b, c, d = (encoding.Member(key, f"h{key}", key) for key in (40, 30, 20, 10))
    found = verify.order_compare("18280", "", [b, c, d, a], [a, b, c, d])[1]
    assert [(x.kind, x.held, x.listed, x.expected) for x in found] == [("misplaced", a, 3, 0)]
    members, found = verify.order_compare("18280", "", [a, b, b, d], [a, b, c, d])
    assert members == 4
    assert [(x.kind, x.listed, x.expected) for x in found] == [
        ("extra", 2, None),  # b listed twice
        ("missing", None, 2),
    ]


def test_verify_and_dry_run_do_not_go_together(db):
    with pytest.raises(CommandError, match="not allowed with"):
        call_command("rebuild_boards", "--verify", "--dry-run")

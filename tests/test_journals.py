"""A board's journal holds a pair a field (issues 35 and 36): a solve reads and writes the pairs of
the programmers it moves, never the journal whole, so its bytes stay the same however full the
journal is; the group parts' histogram changes agree with their pairs; a journal of the layout
before (a part a packed binary) is folded before it takes a move."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest
from bson import Binary
from pymongo import MongoClient

from solutions import mongo, selectors, services
from solutions.leaderboard import journals, orders
from solutions.models import Problem
from tests.conftest import NOW, make_programmer
from tests.support.commands import CommandLog


@pytest.fixture
def listened(mongodb, embedded_server, monkeypatch):
    """The site's MongoDB client listened to; journals folded only when asked."""
    monkeypatch.setattr(journals, "JOURNAL_MAX", 10_000)
    log = CommandLog(on=False)
    client = MongoClient(embedded_server.uri, tz_aware=True, event_listeners=[log])
    mongo.set_client(client)
    yield log
    client.close()


def journal_bytes(log: CommandLog) -> tuple[int, int]:
    """(bytes sent in the journal's updates, bytes received from reads naming a journal)."""
    sent = sum(
        command.sent
        for command in log.commands
        if command.name in ("bulkWrite", "update") and "|journal" in str(command.document)
    )
    received = sum(
        command.received or 0
        for command in log.named("find")
        if "|journal" in str(command.document.get("filter")) and "p." in str(command.document)
    )
    return sent, received


def solve_listened(log: CommandLog, programmer, problem) -> tuple[int, int]:
    log.clear()
    with log.recording():
        services.solve_record(programmer=programmer, problem=problem, solved_at=NOW)
    return journal_bytes(log)


def test_a_solves_journal_bytes_do_not_grow_with_the_pairs_the_journal_holds(listened, now):
    """Ten, then sixty programmers moved into the journals: the eleventh's and the sixty-first's
    solves send and receive the same journal bytes (within a few for the ids' digits)."""
    problem = Problem.objects.create(slug="p1", title="P1")
    crowd = [make_programmer(f"coder{i:02}", country="BD") for i in range(61)]
    for programmer in crowd[:10]:
        services.solve_record(programmer=programmer, problem=problem, solved_at=NOW)
    few = solve_listened(listened, crowd[10], problem)
    for programmer in crowd[11:60]:
        services.solve_record(programmer=programmer, problem=problem, solved_at=NOW)
    many = solve_listened(listened, crowd[60], problem)
    held = journals.journal_read("last-7-days")
    assert len(held["p"][journals.part_key(str(held["frontier"]), "")]) == 61
    assert few[0] and few[1], "the solve read and wrote its journals"
    assert abs(many[0] - few[0]) < 64 and abs(many[1] - few[1]) < 64, (few, many)


def test_each_group_parts_histogram_change_is_what_its_pairs_make(listened, now):
    """Programmers of two countries solve, some twice: each group part's ``h`` is the sum of its
    pairs' changes, the one `group_moves` lays over the group's root."""
    problems = [Problem.objects.create(slug=f"p{i}", title=f"P{i}") for i in range(3)]
    crowd = [make_programmer(f"coder{i:02}", country="BD" if i % 2 else "IN") for i in range(8)]
    for i, programmer in enumerate(crowd):
        for problem in problems[: 1 + i % 3]:
            services.solve_record(programmer=programmer, problem=problem, solved_at=NOW)
    held = journals.journal_read("last-7-days")
    grouped = [key for key in held["p"] if journals.groups.kind_of(journals.part_order(key)[1])]
    assert grouped, "group parts in the journal"
    for key in grouped:
        pairs = journals.part_pairs(held["p"][key]).values()
        made = {s: by for s, by in journals.pairs_histogram(pairs).items() if by}
        kept = {s: by for s, by in journals.change_read(held.get("h", {}).get(key, {})).items()}
        assert made == {s: by for s, by in kept.items() if by}


def test_a_journal_of_the_layout_before_is_folded_before_it_takes_a_move(listened, now, boards):
    """A journal written whole by the code before (each part one packed binary, no ``layout``):
    the next solve folds it first, so nobody it held is lost, then records its own move."""
    problem = Problem.objects.create(slug="p1", title="P1")
    alice, bob = make_programmer("Alice"), make_programmer("bob")
    services.solve_record(programmer=alice, problem=problem, solved_at=NOW - dt.timedelta(hours=1))
    for slug in boards:
        held = journals.journal_read(slug)
        packed = {
            key: Binary(b"".join(bytes(pair) for pair in part.values()))
            for key, part in held.get("p", {}).items()
        }
        old = {k: v for k, v in held.items() if k not in ("h", "layout")} | {"p": packed}
        orders.orders().replace_one({"_id": journals.journal_id(slug)}, old)
    assert journals.fold_first(journals.journal_read("last-7-days"))
    services.solve_record(programmer=bob, problem=problem, solved_at=NOW)
    for slug in ("last-7-days", "all-time"):
        page = selectors.board_page(board=boards[slug], page=1)
        assert Counter(row.handle for row in page.rows) == Counter(["Alice", "bob"]), slug
        assert journals.journal_read(slug).get("layout") == journals.LAYOUT

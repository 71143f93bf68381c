"""Each request reads each MongoDB document once (issue 22): a rank with its neighbours and
forecast, a page, a search, "find me" and a profile ask everything they need of one entry read and
one read of each order's documents (the journal's part, the root, a node a level, the sets), on
orders several levels deep (small sets and nodes, see `leaderboard.tree`)."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter

import pytest
from django.test import Client
from pymongo import MongoClient

from solutions import mongo, selectors, services
from solutions.leaderboard import journals, orders, sets, tree
from solutions.models import Board, Problem, Programmer
from tests.conftest import NOW, make_programmer
from tests.support.commands import CommandLog


def id_reads(log: CommandLog) -> list[tuple[str, str, str]]:
    """The (collection, `_id`, fields asked) of every document the site asked for by `_id`: a
    board's journal holds every day's part, and two days' parts are two different reads."""
    reads: list[tuple[str, str, str]] = []
    for find in log.named("find"):
        wanted = find.document.get("filter", {}).get("_id")
        ids = wanted.get("$in", []) if isinstance(wanted, dict) else [wanted]
        collection, fields = find.document["find"], str(find.document.get("projection"))
        reads += [(collection, str(i), fields) for i in ids if i is not None]
    return reads


@pytest.fixture
def deep(mongodb, boards, monkeypatch, embedded_server, now):
    """60 programmers on orders of sets of 3 under nodes of 3 (three levels and more), Alice in
    the middle of the board; the site's MongoDB client listened to."""
    monkeypatch.setattr(sets, "SET_MAX", 3)
    monkeypatch.setattr(sets, "SET_FILL", 2)
    monkeypatch.setattr(orders, "INLINE_MAX", 1)
    monkeypatch.setattr(tree, "NODE_MAX", 3)
    monkeypatch.setattr(tree, "NODE_FILL", 2)
    rng = random.Random(22)
    crowd = [
        make_programmer(f"coder{i:02}", country=rng.choice(["BD", "IN"])) for i in range(60)
    ] + [make_programmer("Alice", country="BD")]
    problems = [Problem.objects.create(slug=f"p{i}", title=f"P{i}") for i in range(6)]
    services.solves_import(
        solves=[
            (programmer, problem, NOW - dt.timedelta(hours=rng.randrange(1, 100)))
            for programmer in crowd
            for problem in rng.sample(problems, rng.randrange(1, 6))
        ]
    )
    # A few solves after the build: moves in the journals, laid over the orders by readers.
    monkeypatch.setattr(journals, "JOURNAL_MAX", 10_000)
    for programmer in rng.sample(crowd, 5):
        for problem in problems:
            services.solve_record(programmer=programmer, problem=problem, solved_at=NOW)
    assert orders.orders().find_one({"lvl": {"$gte": 2}}), "orders of several levels"
    log = CommandLog()
    client = MongoClient(embedded_server.uri, tz_aware=True, event_listeners=[log])
    mongo.set_client(client)
    yield log
    client.close()


def read_twice(log: CommandLog) -> list:
    return [read for read, times in Counter(id_reads(log)).items() if times > 1]


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/boards/last-7-days/programmers/Alice?around=4",
        "/api/v1/boards/last-7-days/programmers/Alice?around=4&country=BD",
        "/api/v1/boards/last-7-days?page=4&page_size=7",
        "/leaderboard/last-7-days/?page=3",
        "/leaderboard/last-7-days/?q=Alice",
        "/u/Alice/",
    ],
)
def test_a_request_reads_each_document_once(deep, path):
    deep.clear()
    response = Client().get(path)
    assert response.status_code == 200
    assert id_reads(deep), "the request read MongoDB"
    assert read_twice(deep) == []


def test_find_me_reads_each_document_once(deep):
    web = Client()
    web.force_login(Programmer.objects.get(handle="Alice").user)
    deep.clear()
    response = web.get("/leaderboard/last-7-days/?find=me")
    assert response.status_code == 302 and "#me" in response["Location"]
    assert read_twice(deep) == []


def test_around_me_on_deep_orders_lists_the_neighbours_of_the_pages(deep):
    board = Board.objects.get(slug="last-7-days")
    alice = Programmer.objects.get(handle="Alice")
    found = selectors.programmer_around(board=board, programmer=alice, around=4)
    listed = [
        row.handle
        for page in range(1, 10)
        for row in selectors.board_page(board=board, page=page, page_size=7).rows
    ]
    at = listed.index("Alice")
    assert [row.handle for row in found.above] == listed[max(0, at - 4) : at]
    assert [row.handle for row in found.below] == listed[at + 1 : at + 5]

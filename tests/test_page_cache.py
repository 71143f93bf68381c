"""Fast board pages: a board's rows are read and rendered once per board version (and day,
scope and page) and served from the cache; a visitor's whole page once per ETag. What each
viewer sees stays theirs: their own row highlighted, nobody else's."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client

from solutions import selectors, services
from tests.conftest import NOW
from tests.test_pages import rows

BOARD = "/leaderboard/last-7-days/"


def solve(programmer, problem, at: dt.datetime = NOW) -> None:
    services.solve_record(programmer=programmer, problem=problem, solved_at=at)


def signed_in(programmer) -> Client:
    client = Client()
    client.force_login(programmer.user)
    return client


@pytest.fixture
def board_reads(monkeypatch):
    """How many times a board page is read from MongoDB."""
    reads = []
    real = selectors.board_page

    def counting(**kwargs):
        reads.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(selectors, "board_page", counting)
    return reads


def test_an_unchanged_board_is_read_once_for_every_viewer(
    mongodb, now, boards, problems, alice, bob, board_reads
):
    solve(alice, problems[0], NOW - dt.timedelta(hours=1))
    solve(bob, problems[0])
    for client in (Client(), signed_in(alice), signed_in(bob), Client()):
        assert client.get(BOARD).status_code == 200
    assert len(board_reads) == 1
    solve(bob, problems[1])  # a new version: read again, once
    for client in (Client(), signed_in(alice)):
        assert ">bob</a>" in client.get(BOARD).text
    assert len(board_reads) == 2


def test_each_viewer_sees_their_own_row_highlighted_from_the_cached_rows(
    mongodb, now, boards, problems, alice, bob, charlie
):
    solve(alice, problems[0], NOW - dt.timedelta(hours=1))
    solve(bob, problems[0])
    assert rows(Client().get(BOARD)) == [(1, "Alice", 1, False), (1, "bob", 1, False)]
    assert rows(signed_in(alice).get(BOARD)) == [(1, "Alice", 1, True), (1, "bob", 1, False)]
    assert rows(signed_in(bob).get(BOARD)) == [(1, "Alice", 1, False), (1, "bob", 1, True)]
    assert "(you)" in signed_in(bob).get(BOARD).text
    assert "(you)" not in Client().get(BOARD).text
    assert not any(row[3] for row in rows(signed_in(charlie).get(BOARD)))  # not on the board


def test_filters_and_pages_are_cached_apart(mongodb, now, boards, problems, alice, bob):
    solve(alice, problems[0])
    solve(bob, problems[0], NOW - dt.timedelta(hours=1))
    everybody = Client().get(BOARD).text
    in_bangladesh = Client().get(BOARD + "?country=BD").text
    assert ">bob</a>" in everybody and ">bob</a>" not in in_bangladesh
    assert ">Alice</a>" in in_bangladesh
    missing = Client().get(BOARD + "?page=9")
    assert missing.status_code == 404 and Client().get(BOARD + "?page=9").status_code == 404


def test_a_visitors_page_is_rendered_once_per_etag(mongodb, now, boards, problems, alice, bob):
    solve(alice, problems[0])
    first = Client().get(BOARD)
    again = Client().get(BOARD)
    assert again.content == first.content and again["ETag"] == first["ETag"]
    solve(bob, problems[0])
    changed = Client().get(BOARD)
    assert changed["ETag"] != first["ETag"] and ">bob</a>" in changed.text

"""Fast board pages: a board's rows are read and rendered once per board version (and day,
scope and page) and served from the cache; a visitor's whole page once per ETag; the boards and
their versions come from the cache too, so a poll with nothing new reads nothing. What each
viewer sees stays theirs: their own row highlighted, nobody else's; and a solve or an edit of a
board shows at once."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from solutions import live, mongo, recent, selectors, services
from tests.conftest import NOW
from tests.support.pages import rows

BOARD = "/leaderboard/last-7-days/"
BOARD_LIVE = "/leaderboard/last-7-days/live/"


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

    # The views ask the package (`selectors.board_page`), so it is patched there, not in
    # `selectors.boards` where it is defined.
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
    now.shift(dt.timedelta(seconds=2))  # a visitor's page follows the board within a second
    changed = Client().get(BOARD)
    assert changed["ETag"] != first["ETag"] and ">bob</a>" in changed.text


def test_a_visitors_page_follows_the_board_once_a_second_a_signed_in_page_at_once(
    mongodb, now, boards, problems, alice, bob, board_reads
):
    """On contest day every batch of solves is a new version: an anonymous visitor's whole page
    is keyed on the version its live part polls (read at most once a second), so a burst of
    visitors inside a second is one rendering, not one a batch; a programmer signed in sees
    the board as it is (their own solve at once)."""
    solve(alice, problems[0])
    first = Client().get(BOARD)
    solve(bob, problems[0])  # a new version inside the same second
    same_second = Client().get(BOARD)
    assert same_second.content == first.content and ">bob</a>" not in same_second.text
    assert len(board_reads) == 1
    assert ">bob</a>" in signed_in(alice).get(BOARD).text
    now.shift(dt.timedelta(seconds=2))
    assert ">bob</a>" in Client().get(BOARD).text


def test_a_burst_of_polls_with_nothing_new_costs_at_most_one_mongodb_read(
    mongodb, now, boards, problems, alice, mongo_commands, django_assert_num_queries
):
    solve(alice, problems[0])
    visitor = Client()
    etag = visitor.get(BOARD_LIVE)["ETag"]
    mongo_commands.clear()
    with django_assert_num_queries(0):
        for _ in range(10):
            assert visitor.get(BOARD_LIVE, headers={"if-none-match": etag}).status_code == 304
    assert mongo_commands.names == []  # the version read by the first request is still fresh
    now.shift(live.CACHED_VERSION_SECONDS)
    for _ in range(10):
        assert visitor.get(BOARD_LIVE, headers={"if-none-match": etag}).status_code == 304
    assert mongo_commands.names == ["find"]  # read again once, for every poll of that second


def test_a_solve_shows_at_once_on_the_page_and_within_a_second_on_its_fragment(
    mongodb, now, boards, problems, alice, bob
):
    solve(alice, problems[0], NOW - dt.timedelta(hours=1))
    visitor, programmer = Client(), signed_in(bob)
    etags = {}
    for client in (visitor, programmer):
        etags[client] = client.get(BOARD_LIVE)["ETag"]
        assert client.get(BOARD_LIVE, headers={"if-none-match": etags[client]}).status_code == 304
        assert [row[1] for row in rows(client.get(BOARD))] == ["Alice"]
    solve(bob, problems[0])
    # A poll sees the board as of the last whole second: solves land many times a second on
    # contest day, and every new version is read and rendered again for every page watched.
    for client in (visitor, programmer):
        assert client.get(BOARD_LIVE, headers={"if-none-match": etags[client]}).status_code == 304
    now.shift(live.POLLED_VERSION_SECONDS)
    for client in (visitor, programmer):
        fragment = client.get(BOARD_LIVE, headers={"if-none-match": etags[client]})
        assert fragment.status_code == 200 and fragment["ETag"] != etags[client]
        assert [row[1] for row in rows(fragment)] == ["Alice", "bob"]
    assert rows(visitor.get(BOARD)) == [(1, "Alice", 1, False), (1, "bob", 1, False)]
    assert rows(programmer.get(BOARD)) == [(1, "Alice", 1, False), (1, "bob", 1, True)]


def test_a_solve_another_process_counted_shows_within_a_second(
    mongodb, now, boards, problems, alice
):
    solve(alice, problems[0])
    visitor = Client()
    etag = visitor.get(BOARD_LIVE)["ETag"]
    # Another web process touched the board: without a shared cache (Redis) this process may
    # keep the version it read, but never for longer than `CACHED_VERSION_SECONDS`.
    mongo.board_versions().update_one({"_id": "last-7-days"}, {"$inc": {"v": 1}})
    now.shift(live.CACHED_VERSION_SECONDS)
    changed = visitor.get(BOARD_LIVE, headers={"if-none-match": etag})
    assert changed.status_code == 200 and changed["ETag"] != etag


def test_an_edit_of_a_board_shows_at_once(mongodb, now, boards, problems, alice):
    solve(alice, problems[0])
    assert "Last 7 days" in Client().get(BOARD).text
    week = boards["last-7-days"]
    week.title = "Weekly heroes"
    week.save()
    assert "Weekly heroes" in Client().get(BOARD).text
    week.visible = False
    week.save()
    assert Client().get(BOARD).status_code == 404
    assert Client().get("/leaderboard/last-30-days/").status_code == 200


def test_a_page_rendered_afresh_reads_its_programmers_from_sql_once(
    mongodb, now, boards, problems, alice, bob
):
    """The rows' countries and organizations and their arrows (places the day before) come from
    one read of the page's programmers, not one each."""
    solve(alice, problems[0], NOW - dt.timedelta(days=1))
    solve(bob, problems[0])
    cache.clear()
    recent.clear()
    with CaptureQueriesContext(connection) as queries:
        response = Client().get(BOARD)
    assert [handle for _rank, handle, _score, _me in rows(response)] == ["Alice", "bob"]
    programmers = [q for q in queries.captured_queries if '"solutions_programmer"' in q["sql"]]
    assert len(programmers) == 1, [q["sql"] for q in programmers]


def test_polls_of_an_unchanged_version_take_its_rows_from_the_process_not_the_shared_cache(
    mongodb, now, boards, problems, alice, bob, monkeypatch
):
    """Each process keeps the renderings it served a few seconds: on contest day every poll of a
    watched board read its rows (15 KB, the standings' 300 KB) from Redis."""
    solve(alice, problems[0])
    shared_reads = []
    real_get = live.cache.get

    def counted(key, *args, **kwargs):
        shared_reads.append(key)
        return real_get(key, *args, **kwargs)

    monkeypatch.setattr(live.cache, "get", counted)
    watcher = signed_in(bob)  # a visitor's whole fragment is cached as such (by its ETag)
    first = watcher.get(BOARD_LIVE, HTTP_X_REQUESTED_WITH="live")
    rendered = [key for key in shared_reads if key.startswith("board-rows:")]
    assert len(rendered) == 1  # the first looked in the shared cache, then rendered
    for _ in range(5):
        again = watcher.get(BOARD_LIVE, HTTP_X_REQUESTED_WITH="live")
        assert rows(again) == rows(first)
    assert [key for key in shared_reads if key.startswith("board-rows:")] == rendered
    # Another process's copy is its own: this one's forgotten, the shared cache answers.
    recent.clear()
    assert rows(watcher.get(BOARD_LIVE, HTTP_X_REQUESTED_WITH="live")) == rows(first)
    assert len([key for key in shared_reads if key.startswith("board-rows:")]) == 2
    # A new version is rendered anew, whatever the process kept of the last.
    solve(bob, problems[0])
    now.shift(dt.timedelta(seconds=live.POLLED_VERSION_SECONDS + 1))
    handles = [handle for _rank, handle, _score, _me in rows(watcher.get(BOARD_LIVE))]
    assert handles == ["Alice", "bob"]


def test_every_process_polls_a_board_at_the_version_its_first_reader_read_that_second(
    mongodb, now, boards, problems, alice, bob
):
    """The polls of every process see a board at the version the first of them read in that
    second of the clock: one version, so one reading and rendering of the rows, for all of them
    (on contest day four processes, each reading at its own moments, rendered up to four
    versions a second of each watched board)."""
    solve(alice, problems[0])
    watcher = signed_in(bob)
    first = watcher.get(BOARD_LIVE, HTTP_X_REQUESTED_WITH="live")
    solve(bob, problems[0])  # a new version, the same second
    recent.clear()  # another process, which has read nothing yet
    now.shift(dt.timedelta(seconds=0.5))
    assert rows(watcher.get(BOARD_LIVE, HTTP_X_REQUESTED_WITH="live")) == rows(first)
    now.shift(dt.timedelta(seconds=0.5))  # the next second: every process reads it again
    later = watcher.get(BOARD_LIVE, HTTP_X_REQUESTED_WITH="live")
    assert [handle for _rank, handle, _score, _me in rows(later)] == ["Alice", "bob"]

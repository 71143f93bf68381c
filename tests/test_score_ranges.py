"""Score ranges (issue 38, part 1): how many programmers of a board day score from `min` to
`max`, and who they are in rank order, through `GET /api/v1/boards/<board>/scores` and the board
page's sentence ("3 programmers solved 2 or more in the last 7 days"), from the day's histogram
at a cost that does not grow with the board.

Personas as in conftest; "now" is 2020-01-19 12:00 UTC (epoch day 18280), time zone UTC.
"""

from __future__ import annotations

import datetime as dt
import random
import re

import pytest
from django.test import Client
from pymongo import MongoClient

from solutions import leaderboard, mongo, selectors, services
from solutions.models import Programmer
from tests.conftest import NOW, make_programmer
from tests.support.commands import CommandLog

TODAY = 18280


def crowd(size: int, problems, seed: int) -> None:
    """`size` programmers, each with 0 to 6 solves over the last 12 days."""
    programmers = Programmer.objects.bulk_create(
        [Programmer(handle=f"c{seed}x{i:04}") for i in range(size)]
    )
    rng = random.Random(seed)
    services.solves_import(
        solves=[
            (programmer, problem, NOW - dt.timedelta(seconds=rng.randrange(12 * 86400)))
            for programmer in programmers
            for problem in rng.sample(problems, rng.randrange(7))
        ]
    )


def brute_scores(day: int) -> dict[str, int]:
    """{handle: problems solved in the 7 days up to `day`} from the log, for those with any."""
    handles = {p.pk: p.handle for p in Programmer.objects.filter(hidden=False, banned=False)}
    scores: dict[str, int] = {}
    for solve in mongo.solves().find():
        solved_day = leaderboard.epoch_day(solve["solved_at"], "UTC")
        if day - 6 <= solved_day <= day and solve["programmer_id"] in handles:
            handle = handles[solve["programmer_id"]]
            scores[handle] = scores.get(handle, 0) + 1
    return scores


def whole_board(client: Client, date: str) -> list[dict]:
    """Every row of the board day through the API, in rank order."""
    rows, page = [], 1
    while True:
        answer = client.get(
            "/api/v1/boards/last-7-days", {"date": date, "page": page, "page_size": 100}
        ).json()
        rows += answer["entries"]
        if page >= answer["pages"]:
            return rows
        page += 1


def test_counts_and_pages_of_random_ranges_equal_a_brute_force_over_the_log(
    mongodb, now, boards, problems, client
):
    crowd(150, problems, seed=38)
    rng = random.Random(1)
    for day in (TODAY, TODAY - 3):
        date = leaderboard.day_to_date(day).isoformat()
        scores = brute_scores(day)
        board = whole_board(client, date)
        assert {row["handle"]: row["score"] for row in board} == scores
        for _ in range(12):
            low = rng.randrange(1, 8)
            high = rng.choice([None, low, low + rng.randrange(4)])
            expected = [
                row
                for row in board
                if row["score"] >= low and (high is None or row["score"] <= high)
            ]
            page_size = rng.choice([5, 7, 25])
            query = {"min": low, "date": date, "page_size": page_size}
            if high is not None:
                query["max"] = high
            first = client.get("/api/v1/boards/last-7-days/scores", query).json()
            assert first["count"] == len(expected)
            listed = []
            for page in range(1, first["pages"] + 1):
                answer = client.get(
                    "/api/v1/boards/last-7-days/scores", {**query, "page": page}
                ).json()
                assert (answer["min"], answer["max"], answer["date"]) == (low, high, date)
                listed += answer["entries"]
            # The same people, in the same order with the same ranks as on the whole board.
            assert listed == expected, (low, high)


def test_the_range_moves_with_every_solve_and_hide(mongodb, now, boards, problems, alice, bob):
    for problem in problems[:3]:
        services.solve_record(programmer=alice, problem=problem, solved_at=NOW)
    services.solve_record(programmer=bob, problem=problems[0], solved_at=NOW)
    board = boards["last-7-days"]
    found = selectors.board_score_range(board=board, min_score=2)
    assert (found.total, [(r.rank, r.handle, r.score) for r in found.rows]) == (
        1,
        [(1, "Alice", 3)],
    )
    services.solve_record(programmer=bob, problem=problems[1], solved_at=NOW)
    found = selectors.board_score_range(board=board, min_score=2)
    assert [(r.rank, r.handle) for r in found.rows] == [(1, "Alice"), (2, "bob")]
    assert selectors.board_score_range(board=board, min_score=1, max_score=2).total == 1
    services.programmer_set_visibility(programmer=alice, hidden=True)
    found = selectors.board_score_range(board=board, min_score=2)
    assert [(r.rank, r.handle) for r in found.rows] == [(1, "bob")]


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query, field",
    [
        ({}, "min"),
        ({"min": "0"}, "min"),
        ({"min": "-3"}, "min"),
        ({"min": "five"}, "min"),
        ({"min": "1e3"}, "min"),
        ({"min": "10000000000"}, "min"),
        ({"min": "5", "max": "4"}, "max"),
        ({"min": "5", "max": "x"}, "max"),
        ({"min": "5", "page": "0"}, "page"),
        ({"min": "5", "page_size": "101"}, "page_size"),
    ],
)
def test_a_bad_min_max_or_page_is_a_clear_400(mongodb, now, boards, client, query, field):
    answer = client.get("/api/v1/boards/last-7-days/scores", query)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "invalid_parameter" and error["message"].startswith(field)


@pytest.mark.parametrize("date", ["2020-13-01", "yesterday", "2019-01-01", "2020-01-25"])
def test_a_bad_or_unkept_date_is_bad_date(mongodb, now, boards, client, date):
    answer = client.get("/api/v1/boards/last-7-days/scores", {"min": 1, "date": date})
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad_date"


def test_an_unknown_board_is_404(mongodb, now, boards, client):
    answer = client.get("/api/v1/boards/nope/scores", {"min": 1})
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "unknown_board"


# --- the board page --------------------------------------------------------------------------


def test_the_board_page_says_how_many_scored_that_or_more(
    mongodb, now, boards, problems, alice, bob, client
):
    charlie = make_programmer("charlie")
    for programmer, solved in ((alice, 3), (bob, 2), (charlie, 1)):
        for problem in problems[:solved]:
            services.solve_record(programmer=programmer, problem=problem, solved_at=NOW)
    page = client.get("/leaderboard/last-7-days/", {"min": 2}).text
    assert "2 programmers solved 2 or more in the last 7 days" in page
    assert re.search(r'<input[^>]*name="min"[^>]*value="2"', page)
    assert "1 programmer solved 3 or more" in client.get("/leaderboard/last-7-days/?min=3").text
    assert "Nobody solved 9 or more" in client.get("/leaderboard/last-7-days/?min=9").text
    bad = client.get("/leaderboard/last-7-days/", {"min": "0"})
    assert bad.status_code == 400 and "Ensure this value is greater than or equal to 1" in bad.text


# --- cost ------------------------------------------------------------------------------------


def _commands(size: int, embedded_server, problems, seed: int) -> dict[str, list[str]]:
    """The commands of a score range's second page and of the board's second page, with `size`
    programmers."""
    Programmer.objects.all().delete()
    mongo.solves().delete_many({})
    crowd(size, problems, seed)
    log = CommandLog(on=False)
    previous = mongo.get_client()
    client = MongoClient(embedded_server.uri, tz_aware=True, event_listeners=[log])
    mongo.set_client(client)
    paths = {
        "range": "/api/v1/boards/last-7-days/scores?min=2&max=4&page=2",
        "page": "/api/v1/boards/last-7-days?page=2",
    }
    commands = {}
    try:
        web = Client()
        for what, path in paths.items():
            assert web.get(path).status_code == 200  # warm the client and the caches
            log.clear()
            with log.recording():
                answer = web.get(path).json()
            assert answer.get("count", 100) > 50
            commands[what] = [command.name for command in log.commands]
    finally:
        mongo.set_client(previous)
        client.close()
    return commands


def test_a_range_read_costs_what_a_board_page_does_at_any_size(
    mongodb, embedded_server, now, boards, problems
):
    # Past INLINE_MAX programmers, where an order's sets sit under its root: the journal's part,
    # the root (with the histogram), a node and the sets holding the page.
    small = _commands(300, embedded_server, problems, seed=1)
    large = _commands(3000, embedded_server, problems, seed=2)
    assert small["range"] == large["range"] == small["page"] == large["page"]
    assert len(large["range"]) <= 4

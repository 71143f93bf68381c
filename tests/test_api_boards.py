"""GET /api/v1/boards, a board's pages and a programmer's standing: the shapes of DESIGN.md,
past days, groups, bounded parameters, and errors in the API's shape."""

from __future__ import annotations

import datetime as dt

import pytest

from solutions import services
from solutions.models import Board
from tests.conftest import make_programmer


def at(day: str, time: str) -> dt.datetime:
    return dt.datetime.fromisoformat(f"{day}T{time}+00:00")


@pytest.fixture
def scored(mongodb, now, boards, problems, alice, bob, charlie):
    """Today (2020-01-19) Charlie and Alice have 2 each, Charlie first; Bob has 1.
    Yesterday only Alice was on the board."""
    p1, p2, p3 = problems[:3]
    for programmer, problem, moment in [
        (alice, p3, at("2020-01-18", "12:00")),
        (charlie, p1, at("2020-01-19", "09:00")),
        (charlie, p2, at("2020-01-19", "10:00")),
        (bob, p1, at("2020-01-19", "10:30")),
        (alice, p1, at("2020-01-19", "11:00")),
    ]:
        services.solve_record(programmer=programmer, problem=problem, solved_at=moment)


def entries_of(response) -> list[tuple[int, str, int]]:
    return [(row["rank"], row["handle"], row["score"]) for row in response.json()["entries"]]


def error_of(response) -> tuple[int, str]:
    assert set(response.json()["error"]) == {"code", "message"}
    return response.status_code, response.json()["error"]["code"]


def test_the_boards_are_listed_with_their_rules(client, db):
    Board.objects.create(slug="secret", title="Secret", visible=False)
    response = client.get("/api/v1/boards")
    assert response.status_code == 200
    assert response.json()["boards"] == [
        {
            "slug": "last-7-days",
            "title": "Last 7 days",
            "window": "rolling",
            "window_days": 7,
            "metric": "solved",
            "score_label": "Score",
            "ties": "shared",
        },
        {
            "slug": "last-30-days",
            "title": "Last 30 days",
            "window": "rolling",
            "window_days": 30,
            "metric": "solved",
            "score_label": "Score",
            "ties": "shared",
        },
        {
            "slug": "all-time",
            "title": "All time",
            "window": "all_time",
            "window_days": None,
            "metric": "solved",
            "score_label": "Score",
            "ties": "shared",
        },
    ]


def test_a_board_page_lists_ranks_handles_and_scores(client, scored):
    response = client.get("/api/v1/boards/last-7-days")
    assert response.status_code == 200
    body = response.json()
    assert {key: body[key] for key in ["board", "date", "total", "page", "page_size"]} == {
        "board": "last-7-days",
        "date": "2020-01-19",
        "total": 3,
        "page": 1,
        "page_size": 25,
    }
    assert entries_of(response) == [(1, "charlie", 2), (1, "Alice", 2), (3, "bob", 1)]


def test_pages_split_the_board(client, scored):
    response = client.get("/api/v1/boards/last-7-days?page=2&page_size=2")
    assert entries_of(response) == [(3, "bob", 1)]
    assert response.json()["pages"] == 2
    assert entries_of(client.get("/api/v1/boards/last-7-days?page=3&page_size=2")) == []


def test_a_past_date_shows_that_days_final_board(client, scored):
    response = client.get("/api/v1/boards/last-7-days?date=2020-01-18")
    assert response.json()["date"] == "2020-01-18"
    assert entries_of(response) == [(1, "Alice", 1)]


def test_a_group_sees_its_own_ranks(client, scored):
    assert entries_of(client.get("/api/v1/boards/last-7-days?country=bd")) == [(1, "Alice", 2)]
    assert entries_of(client.get("/api/v1/boards/last-7-days?org=BUET")) == [(1, "Alice", 2)]
    standing = client.get("/api/v1/boards/last-7-days/programmers/bob?country=IN").json()
    assert (standing["rank"], standing["total"]) == (1, 1)


def test_a_programmer_standing_has_neighbours_and_a_forecast(client, scored):
    response = client.get("/api/v1/boards/last-7-days/programmers/alice?around=1")
    assert response.status_code == 200
    body = response.json()
    assert (body["handle"], body["rank"], body["score"], body["total"]) == ("Alice", 1, 2, 3)
    assert body["above"] == [{"rank": 1, "handle": "charlie", "score": 2}]
    assert body["below"] == [{"rank": 3, "handle": "bob", "score": 1}]
    # Yesterday's solve leaves the window after the 24th, today's after the 25th.
    assert body["forecast"] == [
        {"date": "2020-01-20", "score": 2},
        {"date": "2020-01-21", "score": 2},
        {"date": "2020-01-22", "score": 2},
        {"date": "2020-01-23", "score": 2},
        {"date": "2020-01-24", "score": 2},
        {"date": "2020-01-25", "score": 1},
        {"date": "2020-01-26", "score": 0},
    ]


def test_around_defaults_to_four_and_zero_means_none(client, scored):
    body = client.get("/api/v1/boards/last-7-days/programmers/bob").json()
    assert [row["handle"] for row in body["above"]] == ["charlie", "Alice"]
    body = client.get("/api/v1/boards/last-7-days/programmers/bob?around=0").json()
    assert (body["above"], body["below"]) == ([], [])


def test_a_programmer_off_the_board_has_no_rank(client, scored):
    make_programmer("dave")
    body = client.get("/api/v1/boards/last-7-days/programmers/dave").json()
    assert (body["rank"], body["score"], body["above"], body["below"]) == (None, 0, [], [])
    assert {point["score"] for point in body["forecast"]} == {0}


def test_all_time_boards_have_no_forecast(client, scored):
    body = client.get("/api/v1/boards/all-time/programmers/alice").json()
    assert (body["rank"], body["score"], body["forecast"]) == (1, 2, [])


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("date=2020-13-01", "bad_date"),
        ("date=19-01-2020", "bad_date"),
        ("date=2019-01-01", "bad_date"),  # older than the kept history
        ("date=2021-01-01", "bad_date"),  # beyond the forecast
        ("page=0", "invalid_parameter"),
        ("page=abc", "invalid_parameter"),
        ("page=100001", "invalid_parameter"),
        ("page_size=0", "invalid_parameter"),
        ("page_size=101", "invalid_parameter"),
        ("around=21", "invalid_parameter"),
        ("around=-1", "invalid_parameter"),
        ("country=BDX", "invalid_parameter"),
        ("country=B%24", "invalid_parameter"),
        ("country=BD&org=BUET", "invalid_parameter"),
    ],
)
def test_bad_parameters_are_400(client, scored, query, code):
    for url in ["/api/v1/boards/last-7-days", "/api/v1/boards/last-7-days/programmers/alice"]:
        assert error_of(client.get(f"{url}?{query}")) == (400, code)


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("/api/v1/boards/nope", "unknown_board"),
        ("/api/v1/boards/secret", "unknown_board"),
        ("/api/v1/boards/nope/programmers/alice", "unknown_board"),
        ("/api/v1/boards/last-7-days/programmers/nobody", "unknown_programmer"),
        ("/api/v1/boards/last-7-days/programmers/a.b", "unknown_programmer"),
        ("/api/v1/boards/last-7-days/programmers/$gt", "unknown_programmer"),
        ("/api/v1/boards/sums.1", "not_found"),
        ("/api/v1/leaderboard", "not_found"),
        ("/api/v1/boards/", "not_found"),
        ("/api/v2/boards", None),  # outside the API: the site's own 404 page
    ],
)
def test_unknown_boards_programmers_and_paths_are_404(client, scored, url, code):
    Board.objects.create(slug="secret", title="Secret", visible=False)
    response = client.get(url)
    assert response.status_code == 404
    if code:
        assert error_of(response) == (404, code)


def test_writing_to_a_board_is_405(client, scored):
    response = client.post("/api/v1/boards/last-7-days", {})
    assert error_of(response) == (405, "method_not_allowed")
    assert response["Allow"] == "GET, HEAD"


def test_a_hostile_group_name_is_only_ever_a_value(client, scored, mongodb):
    # Handles and slugs only ever reach MongoDB as values: a hostile one changes nothing.
    response = client.get("/api/v1/boards/last-7-days/programmers/alice?org=%24where")
    assert response.status_code == 200
    assert response.json()["rank"] is None

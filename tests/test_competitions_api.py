"""POST /api/v1/submissions (judges report every verdict) and
GET /api/v1/competitions/<slug>/standings (what the caller may see), against the embedded server.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.test import Client

from competitions import services
from solutions import mongo, selectors, tokens
from solutions.models import Problem, Programmer

URL = "/api/v1/submissions"
START = dt.datetime(2020, 1, 19, 9, 0, tzinfo=dt.UTC)
END = dt.datetime(2020, 1, 19, 14, 0, tzinfo=dt.UTC)


@pytest.fixture
def judge(db):
    """The token of a judge that reports verdicts."""
    return tokens.service_token_create(name="judge.example.org")[1]


@pytest.fixture
def contest(mongodb, now, problems):
    """Running 09:00-14:00 with p1, p2, p3; "now" is 12:00."""
    return services.competition_create(
        slug="winter-cup", title="Winter Cup", start=START, end=END, problems=problems[:3]
    )


def post(client, token: str | None, body, url: str = URL):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return client.post(url, data, content_type="application/json", headers=headers)


def verdict(**changes) -> dict:
    return {
        "id": "run-1",
        "programmer": "Alice",
        "problem": "p1",
        "verdict": "accepted",
        "submitted_at": "2020-01-19T10:00:00+00:00",
        **changes,
    }


def error_code(response) -> str:
    assert set(response.json()) == {"error"}
    assert set(response.json()["error"]) == {"code", "message"}
    return response.json()["error"]["code"]


def standings(client=None, **headers) -> dict:
    client = client or Client()
    response = client.get("/api/v1/competitions/winter-cup/standings", headers=headers)
    assert response.status_code == 200
    return response.json()


# --- reporting verdicts ----------------------------------------------------------------------


def test_an_accepted_verdict_counts_in_the_competition_and_on_every_board(
    client, contest, judge, alice
):
    response = post(client, judge, verdict())
    assert (response.status_code, response.json()) == (201, {"id": "run-1", "counted": True})
    page = selectors.board_page(board=selectors.board_default())
    assert [(row.handle, row.score) for row in page.rows] == [("Alice", 1)]
    body = standings()
    assert body["rows"][0] == {
        "rank": 1,
        "handle": "Alice",
        "solved": 1,
        "penalty": 60,
        "problems": {
            "p1": {"attempts": 1, "solved_minute": 60, "first": True, "pending": 0},
            "p2": {"attempts": 0, "solved_minute": None, "first": False, "pending": 0},
            "p3": {"attempts": 0, "solved_minute": None, "first": False, "pending": 0},
        },
    }


def test_a_rejected_verdict_costs_twenty_minutes_and_counts_nowhere_else(
    client, contest, judge, alice
):
    rejected = post(client, judge, verdict(id="run-1", verdict="rejected"))
    assert rejected.json() == {"id": "run-1", "counted": False}
    post(client, judge, verdict(id="run-2", submitted_at="2020-01-19T10:30:00Z"))
    row = standings()["rows"][0]
    assert (row["solved"], row["penalty"], row["problems"]["p1"]["attempts"]) == (1, 90 + 20, 2)
    assert mongo.solves().count_documents({}) == 1


def test_a_second_accepted_verdict_is_not_counted_again(client, contest, judge, alice):
    post(client, judge, verdict(id="run-1"))
    again = post(client, judge, verdict(id="run-2", submitted_at="2020-01-19T10:05:00Z"))
    assert again.json() == {"id": "run-2", "counted": False}
    assert standings()["rows"][0]["penalty"] == 60


def test_verdicts_outside_any_running_competition_still_count_as_solves(
    client, contest, judge, alice
):
    response = post(client, judge, verdict(problem="p9"))  # not in the competition
    assert response.json()["counted"] is True
    before_start = verdict(id="run-2", problem="p2", submitted_at="2020-01-19T08:59Z")
    assert post(client, judge, before_start).json()["counted"] is True
    assert standings()["rows"] == []
    assert mongo.submissions().count_documents({"competitions": []}) == 2


def test_a_judge_must_send_a_service_token(client, contest, alice):
    assert error_code(post(client, None, verdict())) == "unauthorized"
    assert post(client, "lbs_not-a-token", verdict()).status_code == 401
    access = tokens.access_token_issue(user=alice.user).token  # a programmer's token is not enough
    assert post(client, access, verdict()).status_code == 401
    assert mongo.submissions().count_documents({}) == 0


def test_the_same_id_and_body_get_the_first_answer_again(client, contest, judge, alice):
    first = post(client, judge, verdict())
    again = post(client, judge, json.dumps(verdict(), indent=2, sort_keys=True))
    assert (again.status_code, again.json()) == (201, first.json())
    assert again["Idempotent-Replayed"] == "true"
    assert mongo.submissions().count_documents({}) == 1


def test_the_same_id_with_another_body_is_a_conflict(client, contest, judge, alice):
    post(client, judge, verdict())
    response = post(client, judge, verdict(verdict="rejected"))
    assert (response.status_code, error_code(response)) == (409, "id_reused")
    assert mongo.submissions().count_documents({}) == 1


def test_ids_of_submissions_and_of_solves_are_kept_apart(client, contest, judge, alice):
    assert post(client, judge, verdict(id="shared-7")).status_code == 201
    solve = {"id": "shared-7", "programmer": "bob", "problem": "p2", "solved_at": "2020-01-19T11Z"}
    assert post(client, judge, solve, url="/api/v1/solves").status_code == 201


@pytest.mark.parametrize(
    "body",
    [
        verdict(extra="field"),
        verdict(verdict="maybe"),
        verdict(verdict=True),
        verdict(programmer="not a handle"),
        verdict(programmer="alice\n"),
        verdict(programmer={"$gt": ""}),
        verdict(problem="../p1"),
        verdict(problem={"$ne": None}),
        verdict(submitted_at="2020-01-19T10:00:00"),  # no offset
        verdict(submitted_at="yesterday"),
        verdict(submitted_at="0001-01-01T00:00:00+01:00"),  # before year 1 in UTC
        verdict(id=""),
        verdict(id=7),
        {key: value for key, value in verdict().items() if key != "verdict"},
        ["a", "list"],
        "not json",
    ],
)
def test_bad_bodies_are_refused_and_write_nothing(client, contest, judge, body):
    response = post(client, judge, body)
    assert response.status_code == 400
    assert error_code(response) in {"invalid_body", "malformed_json"}
    assert mongo.submissions().count_documents({}) == 0
    assert not Programmer.objects.exists()


def test_a_verdict_from_the_future_is_refused_before_anything_is_written(client, contest, judge):
    response = post(client, judge, verdict(programmer="zed", submitted_at="2020-01-19T13:00Z"))
    assert (response.status_code, error_code(response)) == (422, "submission_rejected")
    assert "submitted_at" in response.json()["error"]["message"]
    assert not Programmer.objects.filter(handle="zed").exists()
    assert mongo.submissions().count_documents({}) == 0


def test_unknown_handles_and_problems_are_registered_on_first_use(client, contest, judge):
    assert post(client, judge, verdict(programmer="newcomer", problem="fresh")).status_code == 201
    assert Programmer.objects.filter(handle="newcomer").exists()
    assert Problem.objects.get(slug="fresh").published is False


def test_registration_decides_whether_a_verdict_counts_in_the_competition(
    client, contest, judge, alice, bob
):
    contest.registration_required = True
    contest.save()
    services.competition_register(competition=contest, programmer=bob)
    post(client, judge, verdict(id="run-1", programmer="Alice"))
    post(client, judge, verdict(id="run-2", programmer="bob"))
    assert [row["handle"] for row in standings()["rows"]] == ["bob"]
    assert selectors.board_page(board=selectors.board_default()).total == 2


# --- reading standings -----------------------------------------------------------------------


@pytest.fixture
def frozen(contest, judge, alice, bob):
    """Frozen from 11:00. Alice solved p1 at 10:00, Bob p1 and p2 after the freeze."""
    contest.freeze_at = dt.datetime(2020, 1, 19, 11, 0, tzinfo=dt.UTC)
    contest.save()
    client = Client()
    post(client, judge, verdict(id="run-1"))
    post(client, judge, verdict(id="run-2", programmer="bob", submitted_at="2020-01-19T11:10Z"))
    post(
        client,
        judge,
        verdict(id="run-3", programmer="bob", problem="p2", submitted_at="2020-01-19T11:20Z"),
    )
    return contest


def summary(body: dict) -> list[tuple]:
    return [(row["rank"], row["handle"], row["solved"]) for row in body["rows"]]


def test_anonymous_callers_see_the_frozen_public_standings(frozen):
    body = standings()
    assert (body["competition"], body["frozen"], body["final"]) == ("winter-cup", True, False)
    assert summary(body) == [(1, "Alice", 1), (2, "bob", 0)]


def test_a_programmer_with_an_access_token_sees_their_own_row_live(frozen, bob):
    token = tokens.access_token_issue(user=bob.user).token
    body = standings(Authorization=f"Bearer {token}")
    assert summary(body) == [(1, "bob", 2), (2, "Alice", 1)]


def test_a_bad_access_token_is_refused_rather_than_ignored(frozen):
    response = Client().get(
        "/api/v1/competitions/winter-cup/standings", headers={"Authorization": "Bearer nope"}
    )
    assert (response.status_code, error_code(response)) == (401, "unauthorized")


def test_staff_signed_in_see_the_live_standings(frozen, staff):
    client = Client()
    client.force_login(staff)
    body = standings(client)
    assert body["frozen"] is False
    assert summary(body) == [(1, "bob", 2), (2, "Alice", 1)]


def test_an_unknown_competition_is_a_404_in_the_error_shape(mongodb):
    response = Client().get("/api/v1/competitions/nope/standings")
    assert (response.status_code, error_code(response)) == (404, "unknown_competition")

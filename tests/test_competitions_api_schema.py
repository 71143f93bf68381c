"""POST /api/v1/submissions and GET /api/v1/competitions/{competition}/standings against their
OpenAPI description: real answers, with data in them, for every status the views return.
(`test_api_schema` also runs schemathesis over both operations.)"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from django.http import HttpResponse
from django.test import Client

from competitions import api as competition_api
from competitions import services
from leaderboard_site import logins
from solutions import tokens
from solutions.api import errors, idempotent, parser, views
from tests.support.openapi import openapi_document, response_validator

pytestmark = pytest.mark.slow  # schemathesis: `pytest -m "not slow"` skips it

SUBMISSIONS = "/api/v1/submissions"
STANDINGS = "/api/v1/competitions/{competition}/standings"
START = dt.datetime(2020, 1, 19, 9, 0, tzinfo=dt.UTC)
END = dt.datetime(2020, 1, 19, 14, 0, tzinfo=dt.UTC)
FREEZE = dt.datetime(2020, 1, 19, 11, 0, tzinfo=dt.UTC)


def documented(path: str, method: str) -> dict:
    return openapi_document()["paths"][path][method]


def schema(name: str) -> dict:
    return openapi_document()["components"]["schemas"][name]


def assert_described(path: str, method: str, response) -> dict:
    """The answer's status is documented for the operation and its body has that shape."""
    body = response.json()
    assert str(response.status_code) in documented(path, method)["responses"], (path, body)
    errors = list(response_validator(path, method, response.status_code).iter_errors(body))
    assert errors == [], (path, response.status_code, body)
    return body


@pytest.fixture
def judge(db):
    return tokens.service_token_create(name="judge.example.org")[1]


@pytest.fixture
def contest(mongodb, now, problems):
    """Running 09:00-14:00 with p1, p2, p3, frozen from 11:00; "now" is 12:00."""
    return services.competition_create(
        slug="winter-cup",
        title="Winter Cup",
        start=START,
        end=END,
        freeze_at=FREEZE,
        problems=problems[:3],
    )


def post(token: str | None, body) -> HttpResponse:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return Client().post(SUBMISSIONS, data, content_type="application/json", headers=headers)


def verdict(**changes) -> dict:
    return {
        "id": "run-1",
        "programmer": "Alice",
        "problem": "p1",
        "verdict": "accepted",
        "submitted_at": "2020-01-19T10:00:00Z",
        **changes,
    }


def test_every_error_code_the_api_answers_with_is_documented(db):
    # Codes are literals: ApiError(status, "code", ...), error_response(status, "code", ...), or
    # passed on as a keyword argument such as rejected_code="code".
    literal = re.compile(r'(?:(?:ApiError|error_response)\(\s*\d{3},\s*|_code=)"(\w+)"')
    raised = set()
    files = [
        Path(module.__file__) for module in (errors, idempotent, parser, competition_api, logins)
    ]
    files += Path(views.__file__).parent.glob("*.py")  # the views are a package
    for file in files:
        raised |= set(literal.findall(file.read_text()))
    error = schema("ErrorBody")["properties"]["code"]
    assert {"unknown_competition", "submission_rejected", "id_reused"} <= raised
    assert raised <= set(error["enum"])


def test_submission_answers_match_the_described_shapes(contest, judge, alice, settings):
    too_big = json.dumps(verdict(id="run-9", padding="x" * parser.MAX_BODY_BYTES))
    answers = [
        post(judge, verdict()),
        post(judge, json.dumps(verdict(), indent=2)),  # the same report again
        post(judge, verdict(id="run-2", problem="p2", verdict="rejected")),
        post(judge, verdict(id="run-3", verdict="maybe")),
        post(judge, "{"),
        post(None, verdict(id="run-4")),
        post(judge, verdict(verdict="rejected")),  # run-1 again, with another body
        post(judge, too_big),
        post(judge, verdict(id="run-5", submitted_at="2020-01-19T13:00:00Z")),  # the future
    ]
    settings.SERVICE_TOKEN_WRITES_PER_SECOND = 1  # the clock is pinned: still the same second
    answers.append(post(judge, verdict(id="run-6")))
    bodies = [assert_described(SUBMISSIONS, "post", response) for response in answers]
    statuses = [response.status_code for response in answers]
    assert statuses == [201, 201, 201, 400, 400, 401, 409, 413, 422, 429]
    assert set(map(str, statuses)) == set(documented(SUBMISSIONS, "post")["responses"])
    assert bodies[:3] == [
        {"id": "run-1", "counted": True},
        {"id": "run-1", "counted": True},
        {"id": "run-2", "counted": False},
    ]
    assert set(bodies[0]) == set(schema("SubmissionAnswer")["properties"])
    assert answers[1]["Idempotent-Replayed"] == "true"
    codes = [body["error"]["code"] for body in bodies[3:]]
    assert codes == [
        "invalid_body",
        "malformed_json",
        "unauthorized",
        "id_reused",
        "body_too_large",
        "submission_rejected",
        "rate_limited",
    ]
    assert int(answers[-1]["Retry-After"]) == 1


def assert_exact_keys(standings: dict) -> None:
    """Every field answered is documented and every documented field is answered."""
    assert set(standings) == set(schema("Standings")["properties"])
    for row in standings["rows"]:
        assert set(row) == set(schema("StandingsRow")["properties"])
        for cell in row["problems"].values():
            assert set(cell) == set(schema("StandingsCell")["properties"])


def test_standings_answers_match_the_described_shapes(now, contest, judge, alice, bob, staff):
    """Public (frozen), own, staff and final views, a bad token and unknown competitions."""
    post(judge, verdict(id="run-1", verdict="rejected", submitted_at="2020-01-19T09:30Z"))
    post(judge, verdict(id="run-2", submitted_at="2020-01-19T10:00Z"))
    post(
        judge, verdict(id="run-3", programmer="bob", problem="p2", submitted_at="2020-01-19T11:10Z")
    )
    url = "/api/v1/competitions/winter-cup/standings"
    reader = {"Authorization": f"Bearer {tokens.access_token_issue(user=bob.user).token}"}
    signed_in = Client()
    signed_in.force_login(staff)
    answers = [
        Client().get(url),
        Client().get(url, headers=reader),
        signed_in.get(url),
        Client().get(url, headers={"Authorization": "Bearer nope"}),
        Client().get("/api/v1/competitions/nope/standings"),
        Client().get("/api/v1/competitions/no.such/standings"),  # outside the slug route
    ]
    now.move_to(END + dt.timedelta(hours=1))
    answers.append(Client().get(url))
    bodies = [assert_described(STANDINGS, "get", response) for response in answers]
    statuses = [response.status_code for response in answers]
    assert statuses == [200, 200, 200, 401, 404, 404, 200]
    assert set(map(str, statuses)) == set(documented(STANDINGS, "get")["responses"])
    public, own, live, *errors, final = bodies
    for standings in (public, own, live, final):
        assert_exact_keys(standings)
        assert standings["competition"] == "winter-cup"
        assert all(set(row["problems"]) == {"p1", "p2", "p3"} for row in standings["rows"])
    flags = [(body["frozen"], body["final"]) for body in (public, own, live, final)]
    assert flags == [(True, False), (True, False), (False, False), (False, True)]
    assert public["rows"][0] == {
        "rank": 1,
        "handle": "Alice",
        "solved": 1,
        "penalty": 60 + 20,
        "problems": {
            "p1": {"attempts": 2, "solved_minute": 60, "first": True, "pending": 0},
            "p2": {"attempts": 0, "solved_minute": None, "first": False, "pending": 0},
            "p3": {"attempts": 0, "solved_minute": None, "first": False, "pending": 0},
        },
    }
    # Bob solved p2 after the freeze: the public sees it only once the competition is over.
    summaries = [
        [(row["rank"], row["handle"], row["solved"]) for row in body["rows"]]
        for body in (public, own, live, final)
    ]
    assert summaries == [
        [(1, "Alice", 1), (2, "bob", 0)],
        [(1, "Alice", 1), (2, "bob", 1)],
        [(1, "Alice", 1), (2, "bob", 1)],
        [(1, "Alice", 1), (2, "bob", 1)],
    ]
    assert [body["error"]["code"] for body in errors] == [
        "unauthorized",
        "unknown_competition",
        "not_found",
    ]

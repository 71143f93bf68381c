"""The API against its OpenAPI description: schemathesis generates valid and invalid requests for
every operation and checks each answer's status, content type and body against the document."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings
from schemathesis import checks
from schemathesis.config import SchemathesisConfig

from competitions import services as competition_services
from solutions import services, tokens
from solutions.models import MAX_PROBLEM_POINTS
from solutions.rules import HANDLE_PATTERN, PROBLEM_SLUG_PATTERN
from tests.conftest import NOW
from tests.support.openapi import openapi_document, response_validator

pytestmark = pytest.mark.slow  # schemathesis: `pytest -m "not slow"` skips it

# The competition the description's example slug (`winter-cup`) names, running around NOW.
CONTEST_START = NOW - dt.timedelta(hours=3)
CONTEST_END = NOW + dt.timedelta(hours=2)


@pytest.fixture
def credentials(db, alice):
    """A judge's service token and Alice's access token, named as in the description."""
    access = tokens.access_token_issue(user=alice.user).token
    return {
        "ServiceTokenBearer": tokens.service_token_create(name="judge")[1],
        "AccessTokenBearer": access,
        "OptionalAccessTokenBearer": access,
    }


@pytest.fixture
def contest(mongodb, now, problems, alice, charlie):
    """Running with p1, p2, p3 and frozen from an hour before NOW. Before the freeze Alice solved
    p2 after a rejected attempt; after it Charlie and Alice solved p3 (Alice's view shows hers)."""
    contest = competition_services.competition_create(
        slug="winter-cup",
        title="Winter Cup",
        start=CONTEST_START,
        end=CONTEST_END,
        freeze_at=NOW - dt.timedelta(hours=1),
        problems=problems[:3],
    )
    for key, handle, problem, accepted, minute in [
        ("run-1", "Alice", "p2", False, 30),
        ("run-2", "Alice", "p2", True, 45),
        ("run-3", "charlie", "p3", True, 150),
        ("run-4", "Alice", "p3", True, 160),
    ]:
        competition_services.judge_submission_report(
            key=key,
            handle=handle,
            problem_slug=problem,
            accepted=accepted,
            submitted_at=CONTEST_START + dt.timedelta(minutes=minute),
        )
    return contest


@pytest.fixture
def api_schema(mongodb, now, boards, problems, alice, bob, credentials, contest):
    """The description as the site serves it, with data on the boards, a running competition and
    the tokens to use."""
    services.solve_record(programmer=alice, problem=problems[0], solved_at=NOW)
    services.solve_record(programmer=bob, problem=problems[1], solved_at=NOW - dt.timedelta(days=1))
    config = SchemathesisConfig.from_dict(
        {"auth": {"openapi": {name: {"bearer": token} for name, token in credentials.items()}}}
    )
    return schemathesis.openapi.from_wsgi(
        "/api/v1/openapi.json", get_wsgi_application(), config=config
    )


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_as_described(case):
    # Every check but "valid requests succeed": some rules cannot be stated in a schema (a date
    # outside the kept days is 400, a solve outside the accepted time window is 422), and those
    # answers are still checked against the documented statuses and error shape.
    case.call_and_validate(excluded_checks=[checks.positive_data_acceptance])


def test_the_description_is_served_and_is_valid_openapi(db):
    document = openapi_document()
    assert document["openapi"].startswith("3.")
    assert set(document["paths"]) == {
        "/api/v1/solves",
        "/api/v1/submissions",
        "/api/v1/boards",
        "/api/v1/boards/{board}",
        "/api/v1/boards/{board}/groups",
        "/api/v1/boards/{board}/scores",
        "/api/v1/problems",
        "/api/v1/problems/{slug}/solvers",
        "/api/v1/programmers/{handle}/activity",
        "/api/v1/boards/{board}/programmers/{handle}",
        "/api/v1/competitions/{competition}/standings",
        "/api/v1/auth/token",
        "/api/v1/me",
        "/api/v1/programmers",
    }


def test_the_solve_schema_takes_its_rules_from_the_models(db):
    solve = openapi_document()["components"]["schemas"]["SolveRequest"]["properties"]
    assert solve["programmer"]["pattern"] == HANDLE_PATTERN
    assert solve["problem"]["pattern"] == PROBLEM_SLUG_PATTERN
    assert solve["points"]["maximum"] == MAX_PROBLEM_POINTS


def test_every_example_in_the_description_is_accepted(client, api_schema, credentials):
    """Request bodies and parameters the document gives as examples get a 2xx, as documented."""
    document = openapi_document()
    schemas = document["components"]["schemas"]
    sent = 0
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            schemes = [name for option in operation.get("security", []) for name in option]
            headers = {"Authorization": f"Bearer {credentials[schemes[0]]}"} if schemes else {}
            url, query = path, {}
            for parameter in operation["parameters"]:
                example = parameter.get("example", parameter["schema"].get("example"))
                if parameter["in"] == "path":
                    assert example is not None, (path, parameter["name"])
                    url = url.replace("{" + parameter["name"] + "}", example)
                elif parameter.get("required"):
                    assert example is not None, (path, parameter["name"])
                    query[parameter["name"]] = example
            bodies = [None]
            if "requestBody" in operation:
                schema = operation["requestBody"]["content"]["application/json"]["schema"]
                schema = schemas[schema["$ref"].rsplit("/", 1)[1]] if "$ref" in schema else schema
                bodies = schema["examples"]
            for body in bodies:
                if body is None:
                    response = client.get(url, query, headers=headers)
                else:
                    response = client.post(
                        url, json.dumps(body), "application/json", headers=headers
                    )
                assert 200 <= response.status_code < 300, (method, url, body, response.json())
                sent += 1
    assert sent == 14


def test_real_answers_match_the_described_shapes(client, api_schema, credentials):
    """Answers with data in them (the generated requests mostly meet empty or refused cases)."""
    judge = {"Authorization": f"Bearer {credentials['ServiceTokenBearer']}"}
    reader = {"Authorization": f"Bearer {credentials['AccessTokenBearer']}"}
    body = {"id": "x", "programmer": "bob", "problem": "p3", "solved_at": NOW.isoformat()}
    answers = [
        ("/api/v1/boards", "get", client.get("/api/v1/boards")),
        ("/api/v1/boards/{board}", "get", client.get("/api/v1/boards/last-7-days")),
        (
            "/api/v1/boards/{board}/programmers/{handle}",
            "get",
            client.get("/api/v1/boards/last-7-days/programmers/bob"),
        ),
        ("/api/v1/me", "get", client.get("/api/v1/me", headers=reader)),
        ("/api/v1/programmers", "get", client.get("/api/v1/programmers?prefix=b")),
        (
            "/api/v1/boards/{board}/groups",
            "get",
            client.get("/api/v1/boards/last-7-days/groups?kind=country"),
        ),
        (
            "/api/v1/boards/{board}/scores",
            "get",
            client.get("/api/v1/boards/last-7-days/scores?min=1"),
        ),
        (
            "/api/v1/problems/{slug}/solvers",
            "get",
            client.get("/api/v1/problems/p1/solvers"),
        ),
        (
            "/api/v1/solves",
            "post",
            client.post("/api/v1/solves", json.dumps(body), "application/json", headers=judge),
        ),
        (
            "/api/v1/solves",
            "post",
            client.post("/api/v1/solves", "{", "application/json", headers=judge),
        ),
        (
            "/api/v1/auth/token",
            "post",
            client.post(
                "/api/v1/auth/token",
                {"username": "alice", "password": "nope"},
                content_type="application/json",
            ),
        ),
        (
            "/api/v1/auth/token",
            "post",
            client.post("/api/v1/auth/token", {"username": "alice", "password": "nope"}),
        ),
    ]
    for path, method, response in answers:
        validator = response_validator(path, method, response.status_code)
        assert list(validator.iter_errors(response.json())) == [], (path, response.json())
    assert [response.status_code for _, _, response in answers] == [
        200,
        200,
        200,
        200,
        200,
        200,
        200,
        200,
        201,
        400,
        401,
        415,
    ]

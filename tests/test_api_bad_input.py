"""Never a 500 on the API: lone surrogates, control characters, offsets with seconds, dates the
all-time board does not keep, unknown methods and a storage outage all get a 4xx (or 503) in
the error shape, and nothing is written."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from pymongo.errors import AutoReconnect

from solutions import mongo, selectors, tokens
from solutions.models import Programmer

SOLVE = {
    "id": "judge-1",
    "programmer": "Alice",
    "problem": "p1",
    "solved_at": "2020-01-19T11:00:00Z",
}
VERDICT = {
    "id": "run-1",
    "programmer": "Alice",
    "problem": "p1",
    "verdict": "accepted",
    "submitted_at": "2020-01-19T11:00:00Z",
}
WRITES = {"/api/v1/solves": (SOLVE, "solved_at"), "/api/v1/submissions": (VERDICT, "submitted_at")}


@pytest.fixture
def judge(db):
    return {"Authorization": f"Bearer {tokens.service_token_create(name='judge')[1]}"}


def error_of(response) -> tuple[int, str]:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    return response.status_code, body["error"]["code"]


def nothing_written() -> bool:
    return (
        mongo.solves().count_documents({}) == 0
        and mongo.submissions().count_documents({}) == 0
        and mongo.requests().count_documents({}) == 0
        and not Programmer.objects.exists()
    )


def bad_reports() -> list:
    """(url, JSON text) pairs: each report with one field spoilt. JSON escapes carry the lone
    surrogates, as a client's JSON library would send them."""
    cases = []
    for url, (body, time_field) in WRITES.items():
        spoilt = {
            "lone surrogate in id": ("id", "\ud800"),
            "lone surrogate in handle": ("programmer", "Al\udc00ice"),
            "NUL in id": ("id", "run\x00-1"),
            "control character in id": ("id", "run\x1b[31m"),
            "C1 control character in id": ("id", "run\x85"),
            "NUL after the time": (time_field, body[time_field] + "\x00"),
            "newline after the time": (time_field, body[time_field] + "\n"),
            "offset with seconds": (time_field, "2020-01-19T11:00:00+05:30:15"),
            "lone surrogate in the time": (time_field, "2020-01-19T11:00:00\ud800Z"),
        }
        for name, (field, value) in spoilt.items():
            text = json.dumps({**body, field: value})  # ensure_ascii: "\\ud800" escapes
            cases.append(pytest.param(url, text, id=f"{url.rsplit('/', 1)[1]}: {name}"))
        extra_key = json.dumps({**body, "\ud800": 1})
        cases.append(pytest.param(url, extra_key, id=f"{url.rsplit('/', 1)[1]}: surrogate key"))
    return cases


@pytest.mark.parametrize(("url", "text"), bad_reports())
def test_reports_with_unprintable_or_odd_values_are_400_and_write_nothing(
    client, mongodb, now, judge, url, text
):
    response = client.post(url, text, content_type="application/json", headers=judge)
    assert error_of(response) == (400, "invalid_body")
    assert nothing_written()


@pytest.mark.parametrize(
    "body",
    [
        '{"username": "\\ud800", "password": "x"}',
        '{"username": "alice", "password": "\\udfff"}',
        '{"username": "alice", "password": "correct horse battery\\u0000"}',
        '{"username": "al\\u0000ice", "password": "correct horse battery"}',
    ],
    ids=["surrogate username", "surrogate password", "NUL in password", "NUL in username"],
)
def test_logins_with_unprintable_credentials_are_400(client, mongodb, alice, body):
    response = client.post("/api/v1/auth/token", body, content_type="application/json")
    assert error_of(response) == (400, "invalid_body")


def test_a_time_with_a_whole_minute_offset_is_taken(client, mongodb, now, judge, alice, problems):
    body = {**SOLVE, "solved_at": "2020-01-19T16:45:00+05:45"}  # Nepal: 11:00 UTC
    response = client.post("/api/v1/solves", body, content_type="application/json", headers=judge)
    assert response.status_code == 201


@pytest.mark.parametrize("date", ["2020-01-18", "2020-01-20", "2019-12-25"])
def test_the_all_time_board_answers_only_for_today(client, mongodb, now, boards, alice, date):
    for url in ["/api/v1/boards/all-time", "/api/v1/boards/all-time/programmers/alice"]:
        assert error_of(client.get(f"{url}?date={date}")) == (400, "bad_date")
        assert client.get(f"{url}?date=2020-01-19").status_code == 200
    assert client.get("/api/v1/boards/last-7-days?date=2020-01-18").status_code == 200


@pytest.mark.parametrize("query", ["page=", "country=", "org=", "date=", "org=a%00b"])
def test_empty_or_unprintable_parameters_are_400(client, mongodb, now, boards, query):
    status, code = error_of(client.get(f"/api/v1/boards/last-7-days?{query}"))
    assert (status, code in {"invalid_parameter", "bad_date"}) == (400, True)


def test_a_storage_outage_is_503_with_retry_after(client, mongodb, now, boards, monkeypatch):
    def unreachable(**kwargs):
        raise AutoReconnect("connection refused")

    monkeypatch.setattr(selectors, "board_page", unreachable)  # where the API's views ask
    response = client.get("/api/v1/boards/last-7-days")
    assert error_of(response) == (503, "storage_unavailable")
    assert int(response["Retry-After"]) > 0


def test_reads_answer_head_and_the_document_refuses_writes(client, mongodb, boards):
    assert client.head("/api/v1/boards").status_code == 200
    response = client.post("/api/v1/openapi.json")
    assert error_of(response) == (405, "method_not_allowed")
    assert response["Allow"] == "GET, HEAD"
    assert error_of(client.delete("/api/v1/solves")) == (405, "method_not_allowed")
    assert error_of(client.get("/api/v1/")) == (404, "not_found")


def test_a_form_login_with_undecodable_bytes_is_refused_cleanly(client, mongodb, alice):
    response = client.post(
        "/api/v1/auth/token",
        b"username=%ED%A0%80&password=x",
        content_type="application/x-www-form-urlencoded",
    )
    assert error_of(response) == (415, "unsupported_media_type")  # JSON only, never a form
    assert User.objects.filter(username="alice").exists()

"""Fuzzing the write endpoints: any value in any field — arbitrary unicode with lone surrogates
and control characters, numbers, booleans, nulls, lists, objects — and any extra key gets a 2xx
or a 4xx in the error shape, never a 500; a refused report writes nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solutions import mongo, tokens

# Every code point, lone surrogates and control characters included.
ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
ANY_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=5,
)
# Near-misses of good values, so the fuzzing also reaches past the first checks.
MOMENTS = st.sampled_from(
    ["2020-01-19T11:00:00Z", "2020-01-19T11:00:00+06:00", "2020-01-19T11:00:00+05:30:15"]
) | st.builds(lambda text: "2020-01-19T11:00:00" + text, ANY_TEXT)
ENDPOINTS = {
    "/api/v1/solves": {
        "id": ANY_TEXT,
        "programmer": st.sampled_from(["Alice", "bob"]) | ANY_TEXT,
        "problem": st.sampled_from(["p1", "Two-Sum"]) | ANY_TEXT,
        "solved_at": MOMENTS,
        "points": st.integers(-5, 20_000) | ANY_VALUE,
    },
    "/api/v1/submissions": {
        "id": ANY_TEXT,
        "programmer": st.sampled_from(["Alice", "bob"]) | ANY_TEXT,
        "problem": st.sampled_from(["p1", "p2"]) | ANY_TEXT,
        "verdict": st.sampled_from(["accepted", "rejected"]) | ANY_TEXT,
        "submitted_at": MOMENTS,
    },
    "/api/v1/auth/token": {"username": st.just("alice") | ANY_TEXT, "password": ANY_TEXT},
}


@st.composite
def bodies(draw, fields: dict) -> dict:
    """A body whose fields are each left out, fuzzed, or replaced by any JSON value, perhaps
    with an extra key."""
    body = {}
    for name, strategy in fields.items():
        choice = draw(st.sampled_from(["fuzzed", "fuzzed", "any", "absent"]))
        if choice != "absent":
            body[name] = draw(strategy if choice == "fuzzed" else ANY_VALUE)
    if draw(st.booleans()):
        body[draw(ANY_TEXT)] = draw(ANY_VALUE)
    return body


def assert_answered(response) -> None:
    assert response.status_code < 500, response.content
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"}, body
        assert set(body["error"]) == {"code", "message"}, body
        assert isinstance(body["error"]["code"], str)


def writes() -> tuple[int, int, int]:
    return (
        mongo.solves().count_documents({}),
        mongo.submissions().count_documents({}),
        mongo.requests().count_documents({}),
    )


@pytest.mark.parametrize("url", list(ENDPOINTS))
def test_any_body_gets_a_success_or_a_4xx_in_the_error_shape(
    client, mongodb, now, problems, alice, url
):
    headers = {"Authorization": f"Bearer {tokens.service_token_create(name='judge')[1]}"}

    @settings(
        max_examples=60,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(body=bodies(ENDPOINTS[url]))
    def check(body: dict) -> None:
        before = writes()
        text = json.dumps(body)  # lone surrogates travel as \\udXXX escapes
        response = client.post(url, text, content_type="application/json", headers=headers)
        assert_answered(response)
        if response.status_code == 400:
            assert writes() == before

    check()

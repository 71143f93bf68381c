"""A bound on the solves one process records at once (issue 36): while as many solves as
SOLVES_CONCURRENT_MAX are being recorded, one more is turned away before anything of it is
written, with a 503 and Retry-After on the API and a message on the answer form; a retry once
a slot is free counts it. Wrong answers from the form are not bounded.

The solves in flight are threads holding the process's slots, as recording solves do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.test import Client

from solutions import mongo, solve_slots, tokens

ROOT = Path(__file__).resolve().parent.parent
SOLVE = {
    "id": "judge-1",
    "programmer": "Alice",
    "problem": "p1",
    "solved_at": "2020-01-19T11:00:00+00:00",
}


@pytest.fixture
def judge(db):
    return tokens.service_token_create(name="judge.example.org")[1]


@pytest.fixture
def bound(settings):
    settings.SOLVES_CONCURRENT_MAX = 2
    return 2


@contextmanager
def solves_in_flight(count: int) -> Iterator[None]:
    """`count` threads, each holding one solve slot of this process for the block."""
    holding = threading.Barrier(count + 1, timeout=10)
    done = threading.Event()

    def record_slowly() -> None:
        with solve_slots.solve_slot():
            holding.wait()
            done.wait(timeout=30)

    threads = [threading.Thread(target=record_slowly) for _ in range(count)]
    for thread in threads:
        thread.start()
    holding.wait()  # every slot is held
    try:
        yield
    finally:
        done.set()
        for thread in threads:
            thread.join(timeout=10)


def post_solve(client: Client, judge: str, body: dict = SOLVE):
    return client.post(
        "/api/v1/solves",
        json.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Bearer {judge}"},
    )


def test_a_solve_past_the_bound_is_503_with_retry_after_and_nothing_is_recorded(
    client, mongodb, now, judge, alice, problems, bound
):
    with solves_in_flight(bound):
        refused = post_solve(client, judge)
    assert refused.status_code == 503
    assert refused["Retry-After"] == "1"
    body = refused.json()
    assert set(body) == {"error"} and body["error"]["code"] == "solves_busy"
    assert "nothing was recorded" in body["error"]["message"]
    assert mongodb.solves.count_documents({}) == 0
    assert mongo.requests().count_documents({}) == 0  # the id was not even claimed
    retry = post_solve(client, judge)
    assert (retry.status_code, retry.json()) == (201, {"id": "judge-1", "counted": True})
    assert mongodb.solves.count_documents({}) == 1


def test_a_solve_under_the_bound_is_recorded_while_others_are(
    client, mongodb, now, judge, alice, problems, bound
):
    with solves_in_flight(bound - 1):
        response = post_solve(client, judge)
    assert (response.status_code, response.json()) == (201, {"id": "judge-1", "counted": True})


@pytest.fixture
def answering(mongodb, now, problems, alice):
    client = Client()
    client.force_login(alice.user)
    return client


def test_a_right_answer_past_the_bound_gets_a_message_and_is_not_recorded(answering, alice, bound):
    with solves_in_flight(bound):
        refused = answering.post("/problems/p1/", {"answer": "7"})
    assert refused.status_code == 503
    assert refused["Retry-After"] == "1"
    # A script tells it from an outage as the API's body tells it.
    assert refused["X-Error-Code"] == "solves_busy"
    assert "yours was not recorded. Send it again in 1 second." in refused.text
    assert mongo.submissions().count_documents({"programmer_id": alice.pk}) == 0
    assert mongo.solves().count_documents({"programmer_id": alice.pk}) == 0
    assert answering.post("/problems/p1/", {"answer": "7"}).status_code == 302
    assert mongo.solves().count_documents({"programmer_id": alice.pk}) == 1


def test_a_wrong_answer_is_not_bounded(answering, alice, bound):
    with solves_in_flight(bound):
        assert answering.post("/problems/p1/", {"answer": "8"}).status_code == 302
    assert mongo.submissions().count_documents({"programmer_id": alice.pk}) == 1


@pytest.mark.parametrize("value", ["0", "-1", "four", "2.5"])
def test_the_bound_is_a_setting_parsed_strictly(value):
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "leaderboard_site.settings",
        "DEBUG": "true",
        "SOLVES_CONCURRENT_MAX": value,
    }
    result = subprocess.run(
        [sys.executable, "-c", "import leaderboard_site.settings"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "SOLVES_CONCURRENT_MAX" in result.stderr or "invalid literal" in result.stderr

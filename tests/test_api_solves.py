"""POST /api/v1/solves: a judge with a service token reports solves; retries get the first
answer; bad input gets a 4xx in the error shape and writes nothing."""

from __future__ import annotations

import datetime as dt
import json
import threading
import time

import pytest

from solutions import idempotency, mongo, selectors, tokens
from solutions.models import Problem, Programmer
from solutions.services import solves
from tests.conftest import NOW

URL = "/api/v1/solves"


@pytest.fixture
def judge(db):
    """The token of a judge that reports solves."""
    return tokens.service_token_create(name="judge.example.org")[1]


def post(client, token: str | None, body, **extra):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return client.post(URL, data, content_type="application/json", headers=headers, **extra)


def solve(**changes) -> dict:
    return {
        "id": "judge-1",
        "programmer": "Alice",
        "problem": "p1",
        "solved_at": "2020-01-19T11:00:00+00:00",
        **changes,
    }


def error_code(response) -> str:
    assert set(response.json()) == {"error"}
    assert set(response.json()["error"]) == {"code", "message"}
    return response.json()["error"]["code"]


def test_a_judge_with_a_service_token_records_a_solve(client, mongodb, now, judge, alice, problems):
    response = post(client, judge, solve())
    assert response.status_code == 201
    assert response.json() == {"id": "judge-1", "counted": True}
    page = selectors.board_page(board=selectors.board_default())
    assert [(row.handle, row.score) for row in page.rows] == [("Alice", 1)]


def test_unknown_handles_and_problems_are_registered_on_first_use(client, mongodb, now, judge):
    response = post(client, judge, solve(programmer="newcomer", problem="fresh-one", points=250))
    assert response.status_code == 201
    assert Programmer.objects.filter(handle="newcomer").exists()
    assert Problem.objects.get(slug="fresh-one").published is False
    assert mongodb.solves.find_one({"problem": "fresh-one"})["points"] == 250


def test_a_problem_the_admin_made_with_capitals_can_be_reported(client, mongodb, now, judge, alice):
    Problem.objects.create(slug="Two-Sum", title="Two sum", answer="3")
    response = post(client, judge, solve(problem="Two-Sum"))
    assert (response.status_code, response.json()) == (201, {"id": "judge-1", "counted": True})


def test_a_known_handle_is_matched_in_any_case(client, mongodb, now, judge, alice, problems):
    assert post(client, judge, solve(programmer="ALICE")).status_code == 201
    assert Programmer.objects.filter(handle__iexact="alice").count() == 1


def test_the_same_id_and_body_get_the_first_answer_again(
    client, mongodb, now, judge, alice, problems
):
    first = post(client, judge, solve())
    again = post(client, judge, json.dumps(solve(), indent=4, sort_keys=True))  # same JSON
    assert (again.status_code, again.json()) == (first.status_code, first.json())
    assert again["Idempotent-Replayed"] == "true"
    assert mongodb.solves.count_documents({}) == 1


def test_the_same_id_with_another_body_is_a_conflict(client, mongodb, now, judge, alice, problems):
    post(client, judge, solve())
    response = post(client, judge, solve(problem="p2"))
    assert response.status_code == 409
    assert error_code(response) == "id_reused"
    assert mongodb.solves.count_documents({}) == 1


def test_a_repeated_solve_under_a_new_id_counts_once(client, mongodb, now, judge, alice, problems):
    post(client, judge, solve())
    response = post(client, judge, solve(id="judge-2", solved_at="2020-01-19T11:30:00Z"))
    assert response.json() == {"id": "judge-2", "counted": False}
    assert (
        selectors.programmer_standing(board=selectors.board_default(), programmer=alice).score == 1
    )


def test_ids_of_different_judges_do_not_collide(client, mongodb, now, judge, alice, problems):
    other_judge = tokens.service_token_create(name="games.example.org")[1]
    assert post(client, judge, solve()).status_code == 201
    response = post(client, other_judge, solve(problem="p2"))
    assert response.json() == {"id": "judge-1", "counted": True}


def test_posting_without_a_valid_service_token_is_refused(client, mongodb, now, judge, staff):
    revoked, revoked_token = tokens.service_token_create(name="old judge")
    revoked.active = False
    revoked.save()
    client.force_login(staff)  # a session cookie is never enough
    for token in [None, "lbs_not-a-token", revoked_token, "x" * 10_000]:
        response = post(client, token, solve())
        assert response.status_code == 401
        assert error_code(response) == "unauthorized"
        assert response["WWW-Authenticate"].startswith("Bearer")
    assert mongodb.solves.count_documents({}) == 0


def test_a_service_token_is_stamped_when_used(client, mongodb, now, alice, problems):
    service_token, token = tokens.service_token_create(name="judge")
    post(client, token, solve())
    service_token.refresh_from_db()
    assert service_token.last_used_at == NOW


@pytest.mark.parametrize(
    "body",
    [
        pytest.param('{"id": "judge-1", ', id="malformed JSON"),
        pytest.param(json.dumps(solve()).replace('"p1"', "NaN"), id="NaN"),
        pytest.param(json.dumps(solve())[:-1] + ', "points": Infinity}', id="Infinity"),
        pytest.param('{"id": ' + "[" * 5000 + "]" * 5000 + "}", id="deeply nested"),
        pytest.param(b'{"id": "\xff\xfe"}', id="not UTF-8"),
        pytest.param("[]", id="an array"),
        pytest.param("", id="empty"),
    ],
)
def test_unreadable_bodies_are_400(client, mongodb, now, judge, body):
    response = post(client, judge, body)
    assert response.status_code == 400
    assert error_code(response) in {"malformed_json", "invalid_body"}


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"points": True}, id="true is not a number"),
        pytest.param({"points": "5"}, id="a string is not a number"),
        pytest.param({"points": 0}, id="zero points"),
        pytest.param({"points": 10_001}, id="too many points"),
        pytest.param({"points": 1.5}, id="fractional points"),
        pytest.param({"programmer": {"$gt": ""}}, id="operator-shaped handle"),
        pytest.param({"problem": {"$ne": None}}, id="operator-shaped slug"),
        pytest.param({"programmer": "a.b"}, id="dot in handle"),
        pytest.param({"programmer": "$where"}, id="dollar in handle"),
        pytest.param({"programmer": "Alice\n"}, id="newline after handle"),
        pytest.param({"programmer": "x" * 33}, id="long handle"),
        pytest.param({"problem": "sums.18280"}, id="dot in slug"),
        pytest.param({"problem": "$inc"}, id="dollar in slug"),
        pytest.param({"problem": "p1\n"}, id="newline after slug"),
        pytest.param({"id": ""}, id="empty id"),
        pytest.param({"id": "x" * 129}, id="long id"),
        pytest.param({"id": 7}, id="numeric id"),
        pytest.param({"solved_at": "2020-01-19T11:00:00"}, id="time without offset"),
        pytest.param({"solved_at": "2020-01-19"}, id="date only"),
        pytest.param({"solved_at": "yesterday"}, id="not a time"),
        pytest.param({"solved_at": 1579431600}, id="epoch seconds"),
        pytest.param({"solved_at": "0001-01-01T00:00:00+01:00"}, id="before year 1 in UTC"),
        pytest.param({"verdict": "accepted"}, id="extra field"),
        pytest.param({"id": None}, id="null id"),
    ],
)
def test_invalid_solves_are_400_and_write_nothing(client, mongodb, now, judge, changes):
    response = post(client, judge, solve(**changes))
    assert response.status_code == 400
    assert error_code(response) == "invalid_body"
    assert mongodb.solves.count_documents({}) == 0
    assert mongodb.requests.count_documents({}) == 0
    assert not Programmer.objects.exists()


def test_a_missing_field_is_named_in_the_message(client, mongodb, now, judge):
    body = solve()
    del body["problem"]
    response = post(client, judge, body)
    assert response.status_code == 400
    assert "problem" in response.json()["error"]["message"]


def test_a_body_over_64_kib_is_413(client, mongodb, now, judge):
    response = post(client, judge, solve(id="x" * 70_000))
    assert response.status_code == 413
    assert error_code(response) == "body_too_large"
    # Even past Django's own limit the answer keeps the shape.
    response = post(client, judge, solve(id="x" * 300_000))
    assert (response.status_code, error_code(response)) == (413, "body_too_large")


@pytest.mark.parametrize(
    "solved_at",
    ["2020-01-19T12:06:00+00:00", "2020-01-19T18:06:00+06:00", "2019-12-19T11:00:00Z"],
    ids=["in the future", "in the future elsewhere", "too old"],
)
def test_solves_in_the_future_or_too_old_are_422_and_leave_nothing_behind(
    client, mongodb, now, judge, solved_at
):
    response = post(client, judge, solve(solved_at=solved_at, programmer="ghost"))
    assert response.status_code == 422
    assert error_code(response) == "solve_rejected"
    assert not Programmer.objects.filter(handle="ghost").exists()
    assert mongodb.requests.count_documents({}) == 0
    # The id was never used: the judge can send the corrected solve under it.
    corrected = post(client, judge, solve(programmer="ghost"))
    assert corrected.status_code == 201


def test_a_solve_within_the_clock_skew_is_taken(client, mongodb, now, judge, alice, problems):
    response = post(client, judge, solve(solved_at="2020-01-19T12:04:00Z"))
    assert response.status_code == 201


def test_a_failure_midway_releases_the_id_for_a_retry(
    client, mongodb, now, judge, alice, problems, monkeypatch
):
    def broken(**kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(solves, "solve_record", broken)  # where `solve_report` finds it
    response = post(client, judge, solve())
    assert response.status_code == 500
    assert error_code(response) == "internal_error"
    assert mongodb.requests.count_documents({}) == 0
    monkeypatch.undo()
    assert post(client, judge, solve()).json() == {"id": "judge-1", "counted": True}


def test_other_methods_on_solves_are_405_in_the_error_shape(client, mongodb, judge):
    response = client.get(URL, headers={"Authorization": f"Bearer {judge}"})
    assert response.status_code == 405
    assert error_code(response) == "method_not_allowed"
    assert response["Allow"] == "POST"


# --- the idempotency keys on their own ---------------------------------------------------------


def test_racing_requests_with_one_id_do_the_work_once(mongodb, now):
    started, release = threading.Event(), threading.Event()
    calls, outcomes = [], []

    def work() -> idempotency.Answer:
        calls.append(1)
        started.set()
        release.wait(5)
        return idempotency.Answer(status=201, body={"counted": True})

    def request() -> None:
        try:
            outcomes.append(idempotency.request_answer(key="t:1", body_hash="h", work=work))
        except idempotency.KeyInFlight:
            outcomes.append("in flight")

    first = threading.Thread(target=request)
    first.start()
    started.wait(5)
    others = [threading.Thread(target=request) for _ in range(4)]
    for thread in others:
        thread.start()
    for thread in others:
        thread.join()
    release.set()
    first.join()
    assert len(calls) == 1
    assert outcomes.count("in flight") == 4
    replay = idempotency.request_answer(key="t:1", body_hash="h", work=work)
    assert (replay.status, replay.body, replay.replayed) == (201, {"counted": True}, True)
    assert len(calls) == 1


def test_a_claim_left_by_a_dead_request_is_taken_over_later(mongodb, now, monkeypatch):
    """Claims are timed by the server's clock: this process's clock is pinned years away from
    it, and a claim is still in flight until it is stale on the server, then taken over."""
    monkeypatch.setattr(idempotency, "STALE_CLAIM", dt.timedelta(milliseconds=400))
    # A request claimed the key and died before answering: nothing released the claim.
    assert idempotency._claim(mongo.requests(), key="t:1", body_hash="h") is None
    answer = idempotency.Answer(status=201, body={"counted": False})
    with pytest.raises(idempotency.KeyInFlight):
        idempotency.request_answer(key="t:1", body_hash="h", work=lambda: answer)
    time.sleep(0.5)  # the server's clock moves, not the pinned one
    assert idempotency.request_answer(key="t:1", body_hash="h", work=lambda: answer) == answer

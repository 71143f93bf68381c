"""Every attempt — the answer form, a competition's problem, a judge's report — is recorded by one
service, `services.submission_record`, and its refusals (a banned programmer, a time the boards
cannot take) are checked there, so no way in can skip them."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client

from competitions import services as competition_services
from solutions import mongo, selectors, services, tokens
from solutions.models import Board
from tests.conftest import NOW

START = NOW - dt.timedelta(hours=3)


@pytest.fixture
def contest(mongodb, now, problems):
    return competition_services.competition_create(
        slug="winter-cup",
        title="Winter Cup",
        start=START,
        end=NOW + dt.timedelta(hours=2),
        problems=problems[:3],
    )


def logged_in(programmer) -> Client:
    client = Client()
    client.force_login(programmer.user)
    return client


def judge_posts(**body) -> dict:
    token = tokens.service_token_create(name="judge")[1]
    response = Client().post(
        "/api/v1/submissions",
        {"id": "j1", "verdict": "accepted", "submitted_at": NOW.isoformat(), **body},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    return response


def attempts() -> list[dict]:
    return list(mongo.submissions().find({}, {"_id": 0}).sort("problem", 1))


def all_time_score(handle: str) -> int:
    rows = selectors.board_page(board=Board.objects.get(slug="all-time")).rows
    return sum(row.score for row in rows if row.handle == handle)


def test_every_way_in_records_the_same_attempt(contest, alice):
    logged_in(alice).post("/problems/p4/", {"answer": "28"})
    logged_in(alice).post("/competitions/winter-cup/problems/A/submit/", {"A-answer": "7"})
    assert judge_posts(programmer="Alice", problem="p2").status_code == 201

    recorded = attempts()
    assert [(a["problem"], a["verdict"], a["counted"]) for a in recorded] == [
        ("p1", "accepted", True),
        ("p2", "accepted", True),
        ("p4", "accepted", True),
    ]
    # One shape, whichever way it came: the judge's has no answer text and says where it came from.
    page, judge, form = recorded[0], recorded[1], recorded[2]
    assert set(page) == set(form) == set(judge) - {"source"} | {"answer"}
    assert (page["competitions"], judge["competitions"], form["competitions"]) == (
        ["winter-cup"],
        ["winter-cup"],
        [],
    )
    assert judge["source"] == "judge"
    assert all_time_score("Alice") == 3


def test_the_service_itself_refuses_a_banned_programmer_and_writes_nothing(
    mongodb, now, problems, alice
):
    services.programmer_set_visibility(programmer=alice, banned=True)
    with pytest.raises(services.SubmissionRefused, match="banned"):
        services.answer_submit(programmer=alice, problem=problems[0], answer="7")
    assert attempts() == []
    assert mongo.solves().count_documents({}) == 0


@pytest.mark.parametrize("way", ["answer form", "competition page"])
def test_a_banned_programmer_is_told_why_on_the_page(contest, alice, way):
    services.programmer_set_visibility(programmer=alice, banned=True)
    if way == "answer form":
        response = logged_in(alice).post("/problems/p1/", {"answer": "7"})
    else:
        response = logged_in(alice).post(
            "/competitions/winter-cup/problems/A/submit/", {"A-answer": "7"}
        )
    assert response.status_code == 400
    assert "banned from submitting" in response.text
    assert attempts() == []


def test_a_judges_report_of_a_banned_programmer_is_kept_off_the_boards_until_restored(
    mongodb, now, problems, alice
):
    services.programmer_set_visibility(programmer=alice, banned=True)
    response = judge_posts(programmer="Alice", problem="p1")
    assert response.status_code == 201
    assert [a["verdict"] for a in attempts()] == ["accepted"]
    assert all_time_score("Alice") == 0
    services.programmer_set_visibility(programmer=alice, banned=False)
    assert all_time_score("Alice") == 1


def test_a_hidden_programmers_answer_is_recorded_and_stays_off_the_boards(
    mongodb, now, problems, alice
):
    services.programmer_set_visibility(programmer=alice, hidden=True)
    alice.refresh_from_db()
    response = logged_in(alice).post("/problems/p1/", {"answer": "7"})
    assert response.status_code == 302
    assert [a["verdict"] for a in attempts()] == ["accepted"]
    assert all_time_score("Alice") == 0


def test_an_attempt_at_a_time_the_boards_cannot_take_is_refused_before_any_write(
    mongodb, now, problems, alice, settings
):
    too_late = NOW - dt.timedelta(days=settings.LEADERBOARD_MAX_LATE_DAYS + 2)
    with pytest.raises(services.SolveRejected):
        services.submission_record(
            programmer=alice, problem=problems[0], accepted=True, submitted_at=too_late
        )
    assert attempts() == []
    assert mongo.solves().count_documents({}) == 0

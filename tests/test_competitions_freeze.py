"""A frozen contest stays frozen everywhere (issue 35, part 4): a solve of a competition's problem
made after its freeze shows on no public surface until the end (the board's rank and score, the
profile's solved list, the activity API, the problem's solvers and count, search), then counts
everywhere with its real time, once; staff see it all along.

Personas as in conftest. Winter Cup runs 09:00-14:00 UTC on 2020-01-19, frozen from 11:00, with
p1, p2, p3; "now" is 12:00. Alice solved p1 and p3 before the freeze, Bob p1 before it and p2
after it.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re

import pytest
import time_machine
from django.test import Client

from competitions import selectors, services
from competitions.tasks import archive_finished_competitions_task
from solutions import mongo, tokens
from solutions import services as solution_services
from solutions.services import upkeep
from solutions.tasks import solves_repair_task

START = dt.datetime(2020, 1, 19, 9, 0, tzinfo=dt.UTC)
FREEZE = dt.datetime(2020, 1, 19, 11, 0, tzinfo=dt.UTC)
END = dt.datetime(2020, 1, 19, 14, 0, tzinfo=dt.UTC)
AFTER_END = END + dt.timedelta(minutes=1)
TWO_DAYS_LATER = END + dt.timedelta(days=2)
_keys = itertools.count()


def report(handle: str, problem: str, at: dt.datetime, accepted: bool = True):
    """A judge's verdict, as `POST /api/v1/submissions` records it."""
    return services.judge_submission_report(
        key=f"freeze-{next(_keys)}",
        handle=handle,
        problem_slug=problem,
        accepted=accepted,
        submitted_at=at,
    )


def at(hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime(2020, 1, 19, hour, minute, tzinfo=dt.UTC)


@pytest.fixture
def frozen(mongodb, now, boards, problems, alice, bob, charlie):
    """Winter Cup, frozen at 11:00: Alice solved p1 (10:00) and p3 (10:10), Bob p1 (10:30)
    before the freeze, and Bob p2 at 11:30, after it."""
    contest = services.competition_create(
        slug="winter-cup",
        title="Winter Cup",
        start=START,
        end=END,
        freeze_at=FREEZE,
        problems=problems[:3],
    )
    report("Alice", "p1", at(10))
    report("Alice", "p3", at(10, 10))
    report("bob", "p1", at(10, 30))
    assert report("bob", "p2", at(11, 30)).counted  # accepted, and it will count
    return contest


def solved_on_profile(client: Client, handle: str = "bob") -> list[str]:
    """The titles in the profile's list of solved problems."""
    page = client.get(f"/u/{handle}/").text
    listed = page[page.index("<h2>Solved problems") :]
    return re.findall(r">(Problem \d+)<", listed.split("</ul>")[0])


def surfaces(client: Client | None = None, day: str | None = None) -> dict:
    """What the six public surfaces say about Bob and p2 (`day`: the board day to read)."""
    client = client or Client()
    dated = {"date": day} if day else {}
    standing = client.get("/api/v1/boards/last-7-days/programmers/bob", dated).json()
    found = client.get("/api/v1/programmers", {"prefix": "bob", **dated}).json()["entries"]
    activity = client.get("/api/v1/programmers/bob/activity").json()
    counts = client.get("/api/v1/problems").json()["entries"]
    page = client.get("/problems/p2/").text
    solvers = page[page.index('class="solvers"') :]
    return {
        "board": (standing["rank"], standing["score"]),
        "search": [(m["handle"], m["rank"], m["score"]) for m in found],
        "profile": solved_on_profile(client),
        "activity": (activity["solved"], activity["days"]),
        "p2 solvers": next(e["solvers"] for e in counts if e["slug"] == "p2"),
        "p2 lists bob": ">bob</a>" in solvers,
    }


BEFORE_THE_END = {
    "board": (2, 1),
    "search": [("bob", 2, 1)],
    "profile": ["Problem 1"],
    "activity": (1, {"2020-01-19": 1}),
    "p2 solvers": 0,
    "p2 lists bob": False,
}
AFTER_THE_END = {
    "board": (1, 2),  # level with Alice, who reached 2 first
    "search": [("bob", 1, 2)],
    "profile": ["Problem 2", "Problem 1"],
    "activity": (2, {"2020-01-19": 2}),
    "p2 solvers": 1,
    "p2 lists bob": True,
}


def test_a_solve_after_the_freeze_shows_on_no_public_surface_until_the_end(frozen):
    assert surfaces() == BEFORE_THE_END
    with time_machine.travel(AFTER_END, tick=False):
        assert surfaces() == BEFORE_THE_END  # not released yet: still hidden
        archive_finished_competitions_task()
        assert surfaces() == AFTER_THE_END


def test_once_released_it_counts_on_its_own_day_however_late_the_release(frozen):
    with time_machine.travel(TWO_DAYS_LATER, tick=False):
        assert surfaces(day="2020-01-19") == BEFORE_THE_END
        assert solves_repair_task() == 0  # nothing a crash left; the held solve is released
        assert surfaces(day="2020-01-19") == AFTER_THE_END
        page = Client().get("/api/v1/boards/last-7-days", {"date": "2020-01-19"}).json()
    assert [(e["rank"], e["handle"], e["score"]) for e in page["entries"]] == [
        (1, "Alice", 2),
        (1, "bob", 2),
    ]


def test_a_release_past_the_late_limit_still_counts_it_on_its_own_day(frozen, settings):
    settings.LEADERBOARD_MAX_LATE_DAYS = 1  # the incremental path takes solves one day late
    with time_machine.travel(TWO_DAYS_LATER, tick=False):
        assert surfaces(day="2020-01-19") == BEFORE_THE_END
        archive_finished_competitions_task()
        assert surfaces(day="2020-01-19") == AFTER_THE_END
        all_time = Client().get("/api/v1/boards/all-time/programmers/bob").json()
    assert (all_time["rank"], all_time["score"]) == (1, 2)


def test_it_is_released_once_whoever_releases_it_and_however_often(frozen):
    with time_machine.travel(AFTER_END, tick=False):
        assert solution_services.solves_release() == 1
        assert solution_services.solves_release() == 0
        archive_finished_competitions_task()
        solves_repair_task()
        assert surfaces() == AFTER_THE_END
        solution_services.boards_rebuild_all()  # the log agrees with what the release did
        assert surfaces() == AFTER_THE_END


def test_staff_see_the_held_solve_before_the_end(frozen, staff, bob):
    client = Client()
    client.force_login(staff)
    for viewer, bobs_solved in ((staff, 2), (None, 1)):
        view = selectors.competition_standings(competition=frozen, user=viewer)
        assert {row.handle: row.solved for row in view.rows}["bob"] == bobs_solved
    assert solved_on_profile(client) == ["Problem 2", "Problem 1"]
    assert "held from the public until" in client.get("/u/bob/").text
    # ...while the public and Bob himself see his profile without it.
    assert solved_on_profile(Client()) == ["Problem 1"]
    own = Client()
    own.force_login(bob.user)
    assert solved_on_profile(own) == ["Problem 1"]


def test_the_same_problem_solved_outside_the_competition_is_held_too(frozen, charlie):
    client = Client()
    client.force_login(charlie.user)
    response = client.post("/problems/p2/", {"answer": "14"}, follow=True)
    assert "Accepted" in response.text
    assert 'class="badge ok">Solved' in client.get("/problems/p2/").text  # his own mark
    assert surfaces()["p2 solvers"] == 0
    assert Client().get("/api/v1/programmers/charlie/activity").json()["solved"] == 0
    with time_machine.travel(AFTER_END, tick=False):
        archive_finished_competitions_task()
        assert surfaces()["p2 solvers"] == 2


def test_a_solve_posted_to_the_api_during_the_freeze_is_answered_counted_and_held(frozen):
    _, token = tokens.service_token_create(name="judge")
    body = {"id": "s-1", "programmer": "charlie", "problem": "p3", "solved_at": "2020-01-19T11:45Z"}
    response = Client().post(
        "/api/v1/solves",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert (response.status_code, response.json()["counted"]) == (201, True)
    standing = Client().get("/api/v1/boards/last-7-days/programmers/charlie").json()
    assert standing["rank"] is None
    with time_machine.travel(AFTER_END, tick=False):
        archive_finished_competitions_task()
        standing = Client().get("/api/v1/boards/last-7-days/programmers/charlie").json()
    assert (standing["rank"], standing["score"]) == (3, 1)


def test_hiding_or_rebuilding_during_the_freeze_does_not_count_a_held_solve(frozen, bob):
    solution_services.programmer_set_visibility(programmer=bob, hidden=True)
    solution_services.programmer_set_visibility(programmer=bob, hidden=False)
    assert surfaces() == BEFORE_THE_END
    solution_services.boards_rebuild_all()
    assert surfaces() == BEFORE_THE_END
    with time_machine.travel(AFTER_END, tick=False):
        archive_finished_competitions_task()
        assert surfaces() == AFTER_THE_END


def test_ending_the_competition_early_releases_its_held_solves_at_once(frozen):
    with time_machine.travel(at(12, 30), tick=False):
        assert services.competition_end_now(competition=frozen)
    with time_machine.travel(at(12, 31), tick=False):
        assert surfaces() == BEFORE_THE_END
        archive_finished_competitions_task()
        assert surfaces() == AFTER_THE_END


def test_a_later_end_keeps_the_solves_held_until_then(frozen):
    frozen.end = at(16)
    frozen.save()
    with time_machine.travel(AFTER_END, tick=False):
        archive_finished_competitions_task()
        assert surfaces() == BEFORE_THE_END
        assert mongo.solves().find_one({"problem": "p2"})["held_until"] == at(16)
    with time_machine.travel(at(16, 1), tick=False):
        archive_finished_competitions_task()
        assert surfaces() == AFTER_THE_END


def test_solves_before_the_freeze_or_reported_after_the_end_count_at_once(frozen):
    assert mongo.solves().count_documents({"held_until": {"$exists": True}}) == 1
    with time_machine.travel(AFTER_END, tick=False):
        report("charlie", "p2", at(13, 0))  # a late report of a solve made during the freeze
        standing = Client().get("/api/v1/boards/last-7-days/programmers/charlie").json()
    assert standing["score"] == 1


def test_a_staff_viewers_open_profile_updates_when_a_held_solve_arrives(frozen, staff):
    client = Client()
    client.force_login(staff)
    first = client.get("/u/bob/live/")
    public = Client().get("/u/bob/live/")
    report("bob", "p3", at(11, 40))
    again = client.get("/u/bob/live/", headers={"If-None-Match": first["ETag"]})
    assert again.status_code == 200
    assert "<dt>Problems solved</dt><dd>3</dd>" in again.text  # held ones too, for staff
    unchanged = Client().get("/u/bob/live/", headers={"If-None-Match": public["ETag"]})
    assert unchanged.status_code == 304


def test_the_competition_page_says_a_right_answer_after_the_freeze_counts_at_the_end(frozen, alice):
    client = Client()
    client.force_login(alice.user)
    response = client.post("/competitions/winter-cup/problems/B/submit/", {"B-answer": "14"})
    page = client.get(response["Location"]).text
    assert "accepted; it counts on every board when the contest ends" in page


def test_a_release_stopped_by_a_crash_is_finished_by_the_repair_task(frozen, monkeypatch):
    def crash(**_):
        raise ConnectionError("the worker died")

    with time_machine.travel(AFTER_END, tick=False):
        with monkeypatch.context() as patched:
            patched.setattr(upkeep, "programmer_refresh_boards", crash)
            with pytest.raises(ConnectionError):
                solution_services.solves_release()
        assert surfaces()["board"] == BEFORE_THE_END["board"]  # the crash happened midway
    with time_machine.travel(AFTER_END + dt.timedelta(minutes=5), tick=False):
        assert solves_repair_task() == 1  # Bob's entries, from the log
        assert surfaces() == AFTER_THE_END

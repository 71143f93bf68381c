"""Competitions against the embedded server: answers from the page, the freeze (public, own and
staff views), archived final standings, registration, hidden programmers on standings and boards,
and the admin actions.

Personas as in conftest; the competition runs 09:00-14:00 UTC on 2020-01-19 and "now" is 12:00.
"""

from __future__ import annotations

import datetime as dt
import itertools

import pytest
import time_machine
from django.test import Client

from competitions import selectors, services
from competitions.models import Competition, Registration
from competitions.tasks import archive_finished_competitions_task
from solutions import mongo
from solutions import selectors as board_selectors
from solutions import services as solution_services
from solutions.models import Programmer
from tests.conftest import NOW

START = dt.datetime(2020, 1, 19, 9, 0, tzinfo=dt.UTC)
END = dt.datetime(2020, 1, 19, 14, 0, tzinfo=dt.UTC)
AFTER_END = END + dt.timedelta(minutes=1)
PASSWORD = "correct horse battery"
_keys = itertools.count()


@pytest.fixture
def contest(mongodb, now, problems):
    """A running competition with problems p1, p2, p3 as A, B, C and no freeze."""
    return services.competition_create(
        slug="winter-cup", title="Winter Cup", start=START, end=END, problems=problems[:3]
    )


def minute(m: float) -> dt.datetime:
    return START + dt.timedelta(minutes=m)


def report(handle: str, problem: str, at_minute: float, accepted: bool = True):
    """A judge's verdict, as the API records it."""
    return services.judge_submission_report(
        key=f"test-{next(_keys)}",
        handle=handle,
        problem_slug=problem,
        accepted=accepted,
        submitted_at=minute(at_minute),
    )


def rows_of(view) -> list[tuple]:
    return [(row.rank, row.handle, row.solved, row.penalty) for row in view.rows]


def standings_for(competition, user=None):
    competition.refresh_from_db()
    return selectors.competition_standings(competition=competition, user=user)


def logged_in(programmer_or_user) -> Client:
    client = Client()
    user = getattr(programmer_or_user, "user", programmer_or_user)
    client.force_login(user)
    return client


# --- answering from the page ---------------------------------------------------------------


def test_a_right_answer_on_the_page_counts_in_the_standings_and_on_every_board(contest, alice, bob):
    client = logged_in(alice)
    client.post("/competitions/winter-cup/problems/A/submit/", {"A-answer": "wrong"})
    response = client.post("/competitions/winter-cup/problems/A/submit/", {"A-answer": "7"})
    assert response.status_code == 302
    # 12:00 is minute 180 of the competition, plus 20 for the wrong answer.
    assert rows_of(standings_for(contest)) == [(1, "Alice", 1, 200)]
    page = board_selectors.board_page(board=board_selectors.board_default())
    assert [(row.handle, row.score) for row in page.rows] == [("Alice", 1)]
    attempts = list(mongo.submissions().find({"competitions": "winter-cup"}))
    assert [a["verdict"] for a in attempts] == ["rejected", "accepted"]


def test_answers_are_taken_only_while_the_competition_runs(contest, alice):
    with time_machine.travel(AFTER_END, tick=False):
        response = logged_in(alice).post(
            "/competitions/winter-cup/problems/A/submit/", {"A-answer": "7"}, follow=True
        )
    assert "only while the competition runs" in response.text
    assert mongo.submissions().count_documents({}) == 0


def test_the_page_shows_the_problems_and_the_standings_with_the_first_solver_marked(
    contest, alice, bob
):
    report("bob", "p2", 30)
    report("Alice", "p2", 40)
    page = logged_in(alice).get("/competitions/winter-cup/")
    assert page.status_code == 200
    assert "A. Problem 1" in page.text and 'name="A-answer"' in page.text
    standings_page = logged_in(alice).get("/competitions/winter-cup/standings/")
    assert standings_page.text.count('aria-label="first to solve"') == 1
    assert [r.handle for r in standings_for(contest).rows] == ["bob", "Alice"]
    assert standings_for(contest).rows[0].cells["p2"].first


def test_problems_stay_secret_until_the_start(mongodb, now, problems, alice):
    services.competition_create(
        slug="later",
        title="Later",
        start=NOW + dt.timedelta(hours=1),
        end=NOW + dt.timedelta(hours=3),
        problems=problems[:1],
    )
    page = logged_in(alice).get("/competitions/later/")
    assert "Problem 1" not in page.text
    assert "appear when the competition starts" in page.text


def test_the_list_shows_running_upcoming_and_past_competitions(contest, problems):
    services.competition_create(
        slug="spring",
        title="Spring Cup",
        start=NOW + dt.timedelta(days=30),
        end=NOW + dt.timedelta(days=31),
        problems=problems[:1],
    )
    services.competition_create(
        slug="autumn",
        title="Autumn Cup",
        start=NOW - dt.timedelta(days=60),
        end=NOW - dt.timedelta(days=59),
        problems=problems[:1],
    )
    text = Client().get("/competitions/").text
    running, upcoming, past = (text.index(h) for h in (">Running<", ">Upcoming<", ">Past<"))
    assert running < text.index("Winter Cup") < upcoming < text.index("Spring Cup") < past
    assert past < text.index("Autumn Cup")


# --- the freeze ------------------------------------------------------------------------------


@pytest.fixture
def frozen_contest(contest, alice, bob, charlie):
    """Frozen at 11:00 (minute 120). Alice solved A before it; Bob solved A and B after it."""
    contest.freeze_at = minute(120)
    contest.save()
    report("Alice", "p1", 60)
    report("bob", "p1", 130)
    report("bob", "p2", 140)
    return contest


def test_after_the_freeze_the_public_sees_the_standings_as_they_were_at_the_freeze(
    frozen_contest,
):
    view = standings_for(frozen_contest)
    assert view.frozen and not view.final
    assert rows_of(view) == [(1, "Alice", 1, 60), (2, "bob", 0, 0)]


def test_answers_after_the_freeze_show_to_the_public_as_pending_tries(frozen_contest):
    bob_row = standings_for(frozen_contest).rows[1]
    assert (bob_row.handle, bob_row.cells["p1"].pending, bob_row.cells["p2"].pending) == (
        "bob",
        1,
        1,
    )
    page = Client().get("/competitions/winter-cup/standings/").text
    assert page.count('class="cell pending"') == 2
    assert "later answers show as pending" in page


def test_staff_see_the_results_where_the_public_sees_pending_cells(frozen_contest, staff):
    page = logged_in(staff).get("/competitions/winter-cup/standings/").text
    assert 'class="cell pending"' not in page
    assert page.count('class="cell solved') == 3


def test_a_programmer_sees_their_own_results_live_during_the_freeze(frozen_contest, bob, alice):
    assert rows_of(standings_for(frozen_contest, bob.user)) == [
        (1, "bob", 2, 270),
        (2, "Alice", 1, 60),
    ]
    # ...but not anybody else's.
    assert rows_of(standings_for(frozen_contest, alice.user)) == [
        (1, "Alice", 1, 60),
        (2, "bob", 0, 0),
    ]


def test_staff_see_the_live_standings_during_the_freeze(frozen_contest, staff):
    view = standings_for(frozen_contest, staff)
    assert not view.frozen
    assert rows_of(view) == [(1, "bob", 2, 270), (2, "Alice", 1, 60)]


def test_the_page_says_the_standings_are_frozen(frozen_contest, bob):
    frozen = Client().get("/competitions/winter-cup/standings/").text
    assert 'Frozen at <time datetime="2020-01-19T11:00:00Z"' in frozen
    assert "11:00 UTC</time>" in frozen
    own = logged_in(bob).get("/competitions/winter-cup/standings/").text
    assert "your own row, which is live" in own


# --- the final standings ---------------------------------------------------------------------


def test_the_final_standings_are_archived_when_it_ends_and_include_the_frozen_hour(
    frozen_contest,
):
    assert archive_finished_competitions_task() == 0  # still running
    with time_machine.travel(AFTER_END, tick=False):
        assert archive_finished_competitions_task() == 1
        view = standings_for(frozen_contest)
    assert view.final and not view.frozen
    assert rows_of(view) == [(1, "bob", 2, 270), (2, "Alice", 1, 60)]


def test_a_view_after_the_end_shows_the_final_standings_and_writes_nothing(frozen_contest):
    """A GET never writes: the pages and the API show the final standings computed until beat's
    task archives them, and that task alone archives (and tells the webhooks)."""
    with time_machine.travel(AFTER_END, tick=False):
        page = Client().get("/competitions/winter-cup/standings/")
        api = Client().get("/api/v1/competitions/winter-cup/standings").json()
        Client().get("/competitions/winter-cup/")
        frozen_contest.refresh_from_db()
        assert not frozen_contest.is_archived
        assert api["final"] is True
        assert [(row["rank"], row["handle"]) for row in api["rows"]] == [(1, "bob"), (2, "Alice")]
        assert "Frozen at" not in page.text
        assert archive_finished_competitions_task() == 1
        frozen_contest.refresh_from_db()
        assert frozen_contest.is_archived
        archived = Client().get("/api/v1/competitions/winter-cup/standings").json()
    assert archived["rows"] == api["rows"]


def test_archived_final_standings_stay_as_they_were_after_later_edits(frozen_contest, bob):
    with time_machine.travel(AFTER_END, tick=False):
        assert archive_finished_competitions_task() == 1
        bob.handle = "robert"
        bob.save()
        problem = frozen_contest.links.get(letter="A").problem
        problem.title = "A renamed problem"
        problem.save()
        frozen_contest.links.get(letter="C").delete()
        page = Client().get("/competitions/winter-cup/standings/").text
        api = Client().get("/api/v1/competitions/winter-cup/standings").json()
    final = page[page.index('id="standings"') :]
    assert "bob" in final and "robert" not in final
    assert 'title="Problem 1"' in final and "A renamed problem" not in final
    assert ">C</th>" in final  # the removed problem keeps its column
    assert api["final"] is True
    assert [(row["rank"], row["handle"]) for row in api["rows"]] == [(1, "bob"), (2, "Alice")]
    assert set(api["rows"][0]["problems"]) == {"p1", "p2", "p3"}
    assert api["rows"][0]["problems"]["p2"] == {
        "attempts": 1,
        "solved_minute": 140,
        "first": True,
        "pending": 0,
    }


def test_a_programmer_banned_after_the_end_leaves_the_final_standings(frozen_contest, bob):
    with time_machine.travel(AFTER_END, tick=False):
        archive_finished_competitions_task()
        solution_services.programmer_set_visibility(programmer=bob, banned=True)
        assert rows_of(standings_for(frozen_contest)) == [(1, "Alice", 1, 60)]
        solution_services.programmer_set_visibility(programmer=bob, banned=False)
        assert rows_of(standings_for(frozen_contest))[0] == (1, "bob", 2, 270)


# --- registration ----------------------------------------------------------------------------


def test_a_competition_with_registration_takes_answers_only_from_registered_programmers(
    contest, alice
):
    contest.registration_required = True
    contest.save()
    client = logged_in(alice)
    page = client.get("/competitions/winter-cup/").text
    assert ">Register</button>" in page and 'name="A-answer"' not in page
    refused = client.post(
        "/competitions/winter-cup/problems/A/submit/", {"A-answer": "7"}, follow=True
    )
    assert "Register for this competition" in refused.text
    assert mongo.submissions().count_documents({}) == 0

    client.post("/competitions/winter-cup/register/")
    assert Registration.objects.filter(competition=contest, programmer=alice).exists()
    client.post("/competitions/winter-cup/problems/A/submit/", {"A-answer": "7"})
    assert rows_of(standings_for(contest)) == [(1, "Alice", 1, 180)]


def test_registered_programmers_show_on_the_standings_before_they_answer(contest, alice, bob):
    services.competition_register(competition=contest, programmer=bob)
    report("Alice", "p1", 10)
    assert rows_of(standings_for(contest)) == [(1, "Alice", 1, 10), (2, "bob", 0, 0)]


def test_a_judge_report_from_an_unregistered_programmer_stays_out_of_the_standings(contest, alice):
    contest.registration_required = True
    contest.save()
    result = report("Alice", "p1", 10)
    assert result.competitions == [] and result.counted  # still a solve on the boards
    assert rows_of(standings_for(contest)) == []


# --- hidden and banned programmers -----------------------------------------------------------


def test_a_hidden_programmer_leaves_the_standings_and_the_ranks_close_up(
    contest, alice, bob, charlie
):
    report("Alice", "p1", 10)
    report("bob", "p1", 20)
    report("charlie", "p1", 30)
    solution_services.programmer_set_visibility(programmer=alice, hidden=True)
    view = standings_for(contest)
    assert rows_of(view) == [(1, "bob", 1, 20), (2, "charlie", 1, 30)]
    assert view.rows[0].cells["p1"].first
    assert "Alice" not in Client().get("/competitions/winter-cup/").text


def _board_ranks(board):
    page = board_selectors.board_page(board=board)
    return [(row.rank, row.handle, row.score) for row in page.rows], page.total


def test_a_hidden_programmer_leaves_the_boards_and_the_ranks_close_up(
    contest, boards, alice, bob, charlie
):
    report("Alice", "p1", 10)
    report("Alice", "p2", 11)
    report("bob", "p1", 20)
    report("charlie", "p1", 30)
    board = boards["last-7-days"]
    assert _board_ranks(board) == ([(1, "Alice", 2), (2, "bob", 1), (2, "charlie", 1)], 3)
    solution_services.programmer_set_visibility(programmer=alice, hidden=True)
    assert _board_ranks(board) == ([(1, "bob", 1), (1, "charlie", 1)], 2)
    standing = board_selectors.programmer_standing(board=board, programmer=charlie)
    assert (standing.rank, standing.total) == (1, 2)
    assert board_selectors.programmer_standing(board=board, programmer=alice).rank is None
    # Country groups close up too.
    assert board_selectors.board_page(board=board, scope="country:BD").rows == []


def test_unhiding_puts_a_programmer_back_exactly_where_their_solves_place_them(
    contest, boards, alice, bob
):
    report("Alice", "p1", 10)
    report("Alice", "p2", 11)
    report("bob", "p1", 20)
    solution_services.programmer_set_visibility(programmer=alice, hidden=True)
    report("Alice", "p3", 12)  # solved while hidden: logged, not on the boards
    assert _board_ranks(boards["all-time"]) == ([(1, "bob", 1)], 1)
    solution_services.programmer_set_visibility(programmer=alice, hidden=False)
    for board in boards.values():
        assert _board_ranks(board) == ([(1, "Alice", 3), (2, "bob", 1)], 2)
    standing = board_selectors.programmer_standing(board=boards["last-7-days"], programmer=alice)
    assert (standing.rank, standing.score) == (1, 3)
    # What the service left behind is exactly what a rebuild from the solves log gives.
    for board in boards.values():
        assert solution_services.board_rebuild(board=board, dry_run=True).changed == 0


def test_a_banned_programmer_cannot_answer_in_a_competition(contest, alice):
    solution_services.programmer_set_visibility(programmer=alice, banned=True)
    alice.refresh_from_db()
    response = logged_in(alice).post(
        "/competitions/winter-cup/problems/A/submit/", {"A-answer": "7"}
    )
    assert response.status_code == 400
    assert mongo.submissions().count_documents({}) == 0


# --- the admin -------------------------------------------------------------------------------


def test_staff_hide_and_unhide_programmers_with_admin_actions(contest, staff, alice, bob, boards):
    report("Alice", "p1", 10)
    report("bob", "p1", 20)
    client = logged_in(staff)
    changelist = "/admin/solutions/programmer/"
    client.post(changelist, {"action": "hide", "_selected_action": [alice.pk]})
    assert Programmer.objects.get(pk=alice.pk).hidden
    assert [r.handle for r in board_selectors.board_page(board=boards["all-time"]).rows] == ["bob"]
    client.post(changelist, {"action": "unhide", "_selected_action": [alice.pk]})
    assert not Programmer.objects.get(pk=alice.pk).hidden
    assert len(board_selectors.board_page(board=boards["all-time"]).rows) == 2


def test_staff_end_a_running_competition_now_from_the_admin(contest, staff):
    contest.freeze_at = minute(240)  # 13:00, after "now"
    contest.save()
    logged_in(staff).post(
        "/admin/competitions/competition/",
        {"action": "end_now", "_selected_action": [contest.pk]},
    )
    contest.refresh_from_db()
    assert contest.end == NOW and contest.freeze_at == NOW
    assert not contest.is_running(NOW)


def test_the_admin_pages_for_competitions_open(contest, staff):
    client = logged_in(staff)
    assert client.get("/admin/competitions/competition/").status_code == 200
    assert client.get("/admin/competitions/competition/?status=running").status_code == 200
    assert client.get(f"/admin/competitions/competition/{contest.pk}/change/").status_code == 200
    assert client.get("/admin/competitions/competition/add/").status_code == 200


def test_a_competition_must_end_after_it_starts_and_freeze_inside_it(db, problems):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as ends:
        services.competition_create(slug="x", title="X", start=END, end=START, problems=[])
    assert "end" in ends.value.message_dict
    with pytest.raises(ValidationError) as freeze:
        services.competition_create(
            slug="x", title="X", start=START, end=END, problems=[], freeze_at=AFTER_END
        )
    assert "freeze_at" in freeze.value.message_dict
    assert not Competition.objects.exists()


def test_the_standings_fragment_answers_304_while_nothing_changes(contest, alice, now):
    client = Client()
    first = client.get("/competitions/winter-cup/standings/live/")
    assert first.status_code == 200 and "Nobody is on the standings yet" in first.text
    etag = first["ETag"]
    assert (
        client.get("/competitions/winter-cup/standings/live/", HTTP_IF_NONE_MATCH=etag).status_code
        == 304
    )
    report("Alice", "p1", 10)
    now.shift(selectors.CACHED_STANDINGS_VERSION_SECONDS)  # read again then
    changed = client.get("/competitions/winter-cup/standings/live/", HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and "Alice" in changed.text


# --- the pages -------------------------------------------------------------------------------


def test_the_standings_have_a_page_of_their_own_beside_the_problems(contest, alice):
    report("Alice", "p1", 10)
    page = Client().get("/competitions/winter-cup/standings/")
    assert page.status_code == 200
    assert "<title>Standings · Winter Cup · Leaderboard</title>" in page.text
    assert 'aria-current="page">Standings</a>' in page.text
    assert 'href="/competitions/winter-cup/">Problems</a>' in page.text
    assert 'data-live-url="/competitions/winter-cup/standings/live/"' in page.text
    problems_tab = Client().get("/competitions/winter-cup/").text
    assert 'aria-current="page">Problems</a>' in problems_tab
    assert 'class="standings"' not in problems_tab
    head = Client().head("/competitions/winter-cup/standings/")
    assert head.status_code == 200 and head.content == b""


def test_the_final_standings_page_does_not_poll(frozen_contest):
    with time_machine.travel(AFTER_END, tick=False):
        page = Client().get("/competitions/winter-cup/standings/").text
    assert "Final standings" in page and "data-live-url" not in page


def test_only_the_first_answer_box_takes_the_focus(contest, alice):
    page = logged_in(alice).get("/competitions/winter-cup/").text
    assert page.count('name="A-answer"') == 1 and page.count("autofocus") == 1
    assert page.index("autofocus") > page.index('name="A-answer"') - 200
    # After a refused answer, the box with the error takes it instead.
    refused = logged_in(alice).post("/competitions/winter-cup/problems/B/submit/", {"B-answer": ""})
    assert refused.status_code == 400
    focused = refused.text[refused.text.index("autofocus") - 300 : refused.text.index("autofocus")]
    assert 'name="B-answer"' in focused and refused.text.count("autofocus") == 1

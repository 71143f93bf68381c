"""Staff run the site from the admin: problems, programmers and boards, with search and filters.
Alice, a programmer, has no access."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client

from solutions import mongo, selectors, services
from solutions.models import Board, Programmer
from tests.conftest import NOW


@pytest.fixture
def staff_client(staff) -> Client:
    client = Client()
    client.force_login(staff)
    return client


@pytest.mark.parametrize(
    ("url", "shown", "left_out"),
    [
        ("/admin/solutions/problem/?q=problem+3", "Problem 3", "Problem 4"),
        ("/admin/solutions/problem/?published__exact=1&answer_match__exact=normalized", "p1", ""),
        ("/admin/solutions/programmer/?q=ali", "Alice", "bob"),
        ("/admin/solutions/programmer/?country=IN", "bob", "Alice"),
        ("/admin/solutions/programmer/?banned__exact=0&hidden__exact=0", "Alice", ""),
        ("/admin/solutions/board/?q=30", "Last 30 days", "Last 7 days"),
        ("/admin/solutions/board/?window__exact=all_time", "All time", "Last 7 days"),
    ],
)
def test_staff_can_search_and_filter_every_changelist(
    staff_client, problems, alice, bob, boards, url, shown, left_out
):
    response = staff_client.get(url)
    assert response.status_code == 200
    assert shown in response.text
    if left_out:
        assert f">{left_out}<" not in response.text


@pytest.mark.parametrize("model", ["problem", "programmer", "board"])
def test_staff_can_open_the_add_form_of_each_model(staff_client, model):
    assert staff_client.get(f"/admin/solutions/{model}/add/").status_code == 200


def test_a_programmer_cannot_open_the_admin(db, alice):
    client = Client()
    client.force_login(alice.user)
    response = client.get("/admin/solutions/programmer/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_staff_rebuild_a_board_after_banning_a_programmer(
    mongodb, now, staff_client, boards, problems, alice, bob
):
    services.solve_record(programmer=alice, problem=problems[0], solved_at=NOW)
    services.solve_record(
        programmer=bob, problem=problems[0], solved_at=NOW - dt.timedelta(hours=1)
    )
    Programmer.objects.filter(pk=bob.pk).update(banned=True)
    response = staff_client.post(
        "/admin/solutions/board/",
        {"action": "rebuild", "_selected_action": [boards["last-7-days"].pk]},
        follow=True,
    )
    assert "Last 7 days rebuilt: 1 on the board" in response.text
    assert "1 removed" in response.text
    page = selectors.board_page(board=Board.objects.get(slug="last-7-days"))
    assert [row.handle for row in page.rows] == ["Alice"]
    assert mongo.solves().count_documents({}) == 2  # the log keeps everything


def on_board(board_slug: str = "last-7-days") -> list[str]:
    page = selectors.board_page(board=Board.objects.get(slug=board_slug))
    return [row.handle for row in page.rows]


def test_staff_hide_unhide_and_ban_programmers_with_list_actions(
    mongodb, now, staff_client, boards, problems, alice, bob
):
    services.solve_record(programmer=alice, problem=problems[0], solved_at=NOW)
    services.solve_record(
        programmer=bob, problem=problems[0], solved_at=NOW - dt.timedelta(hours=1)
    )
    changelist = "/admin/solutions/programmer/"
    staff_client.post(changelist, {"action": "hide", "_selected_action": [bob.pk]})
    assert on_board() == ["Alice"]
    staff_client.post(changelist, {"action": "unhide", "_selected_action": [bob.pk]})
    assert on_board() == ["bob", "Alice"]
    staff_client.post(changelist, {"action": "ban", "_selected_action": [bob.pk]})
    assert on_board("all-time") == ["Alice"]
    assert Programmer.objects.get(pk=bob.pk).banned


def test_renaming_a_programmer_or_moving_their_country_in_the_admin_moves_their_board_rows(
    mongodb, now, staff_client, boards, problems, alice, bob
):
    services.solve_record(programmer=alice, problem=problems[0], solved_at=NOW)
    board = Board.objects.get(slug="last-7-days")
    form = {
        "handle": "Alicia",
        "country": "IN",
        "organization": "BUET",
        "user": alice.user.pk,
    }
    response = staff_client.post(f"/admin/solutions/programmer/{alice.pk}/change/", form)
    assert response.status_code == 302, response.text[:2000]
    assert on_board() == ["Alicia"]
    india = selectors.board_page(board=board, scope="country:IN")
    assert [(row.rank, row.handle) for row in india.rows] == [(1, "Alicia")]
    assert selectors.board_page(board=board, scope="country:BD").total == 0

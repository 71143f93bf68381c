"""The site through its real pages: sign up, answer problems, and watch the boards, as a
programmer would. Alice (BD, BUET) and Bob (IN) solve problems; Charlie has solved nothing."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client

from accounts import services as account_services
from competitions import services as competition_services
from solutions import leaderboard, mongo, services
from solutions.models import Board, Problem, Programmer
from tests.conftest import NOW
from tests.support.pages import crowd, ranks, row_html, rows, signed_in, solve

TODAY = leaderboard.date_to_day(NOW.date())


def answer(client: Client, problem: Problem, text: str):
    return client.post(f"/problems/{problem.slug}/", {"answer": text}, follow=True)


# --- the whole flow ----------------------------------------------------------------------------


def test_a_newcomer_signs_up_answers_and_sees_their_rank(mongodb, now, boards, problems):
    client = Client()
    response = client.post(
        "/accounts/signup/",
        {
            "username": "Dana_42",
            "password1": "a long and unusual passphrase",
            "password2": "a long and unusual passphrase",
            "country": "NP",
            "organization": "Tribhuvan",
        },
        follow=True,
    )
    assert response.redirect_chain == [("/problems/", 302)]
    assert "Welcome, Dana_42!" in response.text
    dana = Programmer.objects.get(handle="Dana_42")
    assert (dana.user.username, dana.country.name, dana.organization) == (
        "Dana_42",
        "Nepal",
        "Tribhuvan",
    )

    response = answer(client, problems[0], "wrong")
    assert "Wrong answer" in response.text
    assert rows(client.get("/leaderboard/")) == []

    response = answer(client, problems[0], "7")
    assert "Accepted — counted on every board" in response.text
    assert rows(client.get("/leaderboard/")) == [(1, "Dana_42", 1, True)]

    profile = client.get("/u/dana_42/")
    assert "Dana_42" in profile.text
    assert [row[:3] for row in rows(client.get("/leaderboard/all-time/"))] == [(1, "Dana_42", 1)]
    assert "Problem 1" in profile.text


def test_a_wrong_answer_says_so_and_is_recorded(mongodb, now, boards, problems, alice):
    client = signed_in(alice)
    response = answer(client, problems[0], " 8 ")
    assert "Wrong answer" in response.text
    assert mongo.submissions().count_documents({"programmer_id": alice.pk}) == 1
    assert "Wrong answer" in client.get("/submissions/").text
    assert mongo.solves().count_documents({}) == 0


def test_a_right_answer_puts_you_on_every_board_with_your_row_highlighted(
    mongodb, now, boards, problems, alice, bob
):
    solve(bob, problems[0], NOW - dt.timedelta(hours=1))
    client = signed_in(alice)
    response = answer(client, problems[1], " 14 ")  # trimmed, case-insensitive by default
    assert "Accepted — counted on every board" in response.text
    for url in ["/leaderboard/", "/leaderboard/last-30-days/", "/leaderboard/all-time/"]:
        assert rows(client.get(url)) == [(1, "bob", 1, False), (1, "Alice", 1, True)]


def test_a_second_right_answer_is_accepted_but_counts_once(mongodb, now, boards, problems, alice):
    client = signed_in(alice)
    answer(client, problems[0], "7")
    response = answer(client, problems[0], "7")
    assert "Accepted — you had already solved this; it counts once" in response.text
    assert rows(client.get("/leaderboard/")) == [(1, "Alice", 1, True)]
    assert mongo.submissions().count_documents({"programmer_id": alice.pk}) == 2


def test_the_answer_form_redirects_after_posting(mongodb, now, problems, alice):
    response = signed_in(alice).post(f"/problems/{problems[0].slug}/", {"answer": "7"})
    assert response.status_code == 302
    assert response["Location"] == f"/problems/{problems[0].slug}/"


def test_problems_show_which_ones_you_solved(mongodb, now, boards, problems, alice):
    solve(alice, problems[2])
    page = signed_in(alice).get("/problems/").text
    assert page.count("Solved") == 1
    assert page.count("Not solved") == len(problems) - 1


def test_a_visitor_can_read_a_problem_and_is_asked_to_log_in_to_answer(mongodb, problems):
    page = Client().get(f"/problems/{problems[0].slug}/")
    assert page.status_code == 200
    assert "Problem 1" in page.text
    assert "Log in to answer" in page.text
    assert 'name="answer"' not in page.text


def test_submissions_need_a_login(mongodb):
    response = Client().get("/submissions/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_the_login_page_logs_you_in(mongodb, alice):
    client = Client()
    assert client.get("/accounts/login/").status_code == 200
    response = client.post(
        "/accounts/login/",
        {"username": "alice", "password": "correct horse battery"},
        follow=True,
    )
    assert "Log out" in response.text
    assert 'href="/u/Alice/"' in response.text


# --- the profile -------------------------------------------------------------------------------


def test_the_profile_shows_rank_total_percentile_forecast_and_solved_problems(
    mongodb, now, boards, problems, alice, bob
):
    solve(bob, problems[0], NOW - dt.timedelta(days=2))
    solve(bob, problems[1], NOW - dt.timedelta(days=2))
    solve(alice, problems[2], NOW - dt.timedelta(days=5))
    page = Client().get("/u/ALICE/")  # any case finds her
    assert page.status_code == 200
    standings = page.context["profile"].boards
    last_7 = next(item for item in standings if item.standing.board.slug == "last-7-days")
    assert (last_7.standing.rank, last_7.standing.score, last_7.standing.total) == (2, 1, 2)
    assert last_7.standing.percentile == 50.0
    # Solved five days ago: still counted for one more day of a 7-day window, then gone.
    assert [score for _, score in last_7.forecast] == [1, 0, 0, 0, 0, 0, 0]
    assert "Forecast on Last 7 days" in page.text
    assert "Forecast on All time" not in page.text
    assert "Problem 3" in page.text


def test_an_unknown_profile_is_not_found(mongodb):
    assert Client().get("/u/nobody/").status_code == 404


def profile_paths(handle: str) -> list[str]:
    """Everything that shows a programmer's solves: the profile, its live part, the activity."""
    return [f"/u/{handle}/", f"/u/{handle}/live/", f"/api/v1/programmers/{handle}/activity"]


@pytest.mark.parametrize(
    ("change", "staff_sees_it"),
    [
        ({"hidden": True}, True),
        ({"banned": True}, False),
        ({"hidden": True, "banned": True}, False),
    ],
    ids=["hidden", "banned", "hidden and banned"],
)
def test_a_banned_programmer_has_no_profile_and_a_hidden_one_only_for_staff(
    mongodb, now, boards, problems, alice, bob, staff, change, staff_sees_it
):
    solve(alice, problems[0])
    services.programmer_set_visibility(programmer=alice, **change)
    as_staff = Client()
    as_staff.force_login(staff)
    for path in profile_paths("Alice"):
        assert Client().get(path).status_code == 404, path
        assert signed_in(bob).get(path).status_code == 404, path
        assert as_staff.get(path).status_code == (200 if staff_sees_it else 404), path
    services.programmer_set_visibility(programmer=alice, hidden=False, banned=False)
    for path in profile_paths("Alice"):
        assert Client().get(path).status_code == 200, path


def test_a_deleted_account_has_no_profile_even_for_staff(
    mongodb, now, boards, problems, alice, staff
):
    solve(alice, problems[0])
    account_services.account_delete(user=alice.user)
    as_staff = Client()
    as_staff.force_login(staff)
    for path in profile_paths(f"deleted-{alice.pk}"):
        assert Client().get(path).status_code == 404, path
        assert as_staff.get(path).status_code == 404, path


# --- what caches may keep ----------------------------------------------------------------------


def cache_control(response) -> set[str]:
    return {part.strip() for part in response.get("Cache-Control", "").split(",") if part}


def test_every_page_made_for_a_signed_in_visitor_is_private(mongodb, now, boards, problems, alice):
    competition_services.competition_create(
        slug="cup", title="Cup", start=NOW, end=NOW + dt.timedelta(hours=2), problems=problems[:1]
    )
    client = signed_in(alice)
    for path in [
        "/account/",
        "/account/alerts/",
        "/notifications/",
        "/submissions/",
        "/problems/",
        "/problems/p1/",
        "/leaderboard/",
        "/u/Alice/",
        "/competitions/",
        "/competitions/cup/",
        "/competitions/cup/standings/",
        "/api/v1/competitions/cup/standings",
    ]:
        response = client.get(path)
        assert response.status_code == 200, path
        assert "private" in cache_control(response), path
    # The live pages still answer 304 while nothing changed; the API's anonymous reads, the same
    # for everybody, stay as they were.
    live = client.get("/leaderboard/last-7-days/live/")
    again = client.get("/leaderboard/last-7-days/live/", headers={"If-None-Match": live["ETag"]})
    assert again.status_code == 304 and cache_control(again) == {"private", "no-cache"}
    for path in ["/api/v1/boards", "/api/v1/boards/last-7-days", "/api/v1/problems"]:
        assert "private" not in cache_control(Client().get(path)), path


def test_an_api_read_with_an_access_token_is_private(mongodb, now, boards, alice):
    client = Client()
    token = client.post(
        "/api/v1/auth/token",
        {"username": "alice", "password": "correct horse battery"},
        content_type="application/json",
    ).json()["token"]
    response = client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    assert "private" in cache_control(response)
    assert "Authorization" in response["Vary"]


# --- the board ---------------------------------------------------------------------------------


def test_ties_share_a_rank_and_the_earlier_one_is_listed_first(mongodb, now, boards):
    crowd([3, 2, 2, 1])
    page = Client().get("/leaderboard/")
    assert ranks(page) == [(1, "p00", 3), (2, "p01", 2), (2, "p02", 2), (4, "p03", 1)]
    assert "Equal scores share a rank (1, 2, 2, 4)" in page.text
    assert "4 programmers on this board" in page.text


def test_a_unique_ranks_board_says_so_and_ranks_everyone_apart(mongodb, now, boards):
    Board.objects.filter(slug="last-7-days").update(ties=Board.UNIQUE)
    crowd([3, 2, 2, 1])
    page = Client().get("/leaderboard/")
    assert [rank for rank, _, _ in ranks(page)] == [1, 2, 3, 4]
    assert "Every programmer has a rank of their own" in page.text


def test_thirty_programmers_fill_two_pages_of_twenty_five(mongodb, now, boards):
    crowd(list(range(30, 0, -1)))
    first, second = Client().get("/leaderboard/"), Client().get("/leaderboard/?page=2")
    assert [rank for rank, _, _ in ranks(first)] == list(range(1, 26))
    assert ranks(second) == [(26 + i, f"p{25 + i:02}", 5 - i) for i in range(5)]
    assert 'href="?page=2"' in first.text
    assert "30 programmers on this board" in second.text


def test_a_past_date_shows_that_days_final_board(mongodb, now, boards, problems, alice, bob):
    solve(bob, problems[0], NOW - dt.timedelta(days=3))
    solve(alice, problems[0], NOW)
    solve(alice, problems[1], NOW)
    three_days_ago = (NOW - dt.timedelta(days=3)).date().isoformat()
    past = Client().get(f"/leaderboard/?date={three_days_ago}")
    assert ranks(past) == [(1, "bob", 1)]
    assert "Final board of Thursday 16 January 2020" in past.text
    assert ranks(Client().get("/leaderboard/")) == [(1, "Alice", 2), (2, "bob", 1)]
    assert (
        "Nobody is on this board on that day" in Client().get("/leaderboard/?date=2020-01-15").text
    )


def test_day_links_step_to_the_previous_day_and_back(mongodb, now, boards):
    today = Client().get("/leaderboard/").text
    assert 'href="?date=2020-01-18"' in today
    assert "Next day" not in today
    yesterday = Client().get("/leaderboard/?date=2020-01-18").text
    assert 'href="?date=2020-01-17"' in yesterday
    assert 'href="?date=2020-01-19"' in yesterday


def test_searching_a_handle_shows_their_rank_with_four_above_and_four_below(mongodb, now, boards):
    crowd(list(range(12, 0, -1)))
    page = Client().get("/leaderboard/?q=P06")  # any case
    assert ranks(page) == [(rank, f"p{rank - 1:02}", 13 - rank) for rank in range(3, 12)]
    assert "Around p06" in page.text


def test_searching_says_when_a_programmer_is_absent_or_unknown(mongodb, now, boards, charlie):
    assert "charlie</a> is not on this board" in Client().get("/leaderboard/?q=charlie").text
    assert "No one starts with “zed”" in Client().get("/leaderboard/?q=zed").text


def test_find_me_jumps_to_the_page_holding_you_even_inside_a_big_tie(
    mongodb, now, boards, problems, alice
):
    crowd([1] * 30)  # thirty programmers share rank 1, all listed before Alice
    solve(alice, problems[0], NOW)
    client = signed_in(alice)
    board = client.get("/leaderboard/")
    assert "You are ranked <strong>1</strong> of 31" in board.text
    assert "Find me" in board.text
    response = client.get("/leaderboard/?find=me")
    assert response.status_code == 302
    assert response["Location"] == "/leaderboard/?page=2#me"
    assert rows(client.get("/leaderboard/?page=2"))[-1] == (1, "Alice", 1, True)


def test_find_me_is_offered_only_to_programmers_on_the_board(mongodb, now, boards, charlie):
    page = signed_in(charlie).get("/leaderboard/").text
    assert "Find me" not in page
    assert "You are not on this board" in page
    assert "Find me" not in Client().get("/leaderboard/").text


def test_a_country_or_organization_filter_ranks_within_the_group(
    mongodb, now, boards, problems, alice, bob
):
    for problem in problems[:3]:
        solve(bob, problem, NOW - dt.timedelta(hours=1))
    solve(alice, problems[0], NOW)
    assert ranks(Client().get("/leaderboard/")) == [(1, "bob", 3), (2, "Alice", 1)]
    in_bangladesh = Client().get("/leaderboard/?country=bd")
    assert ranks(in_bangladesh) == [(1, "Alice", 1)]
    assert "1 programmer on this board from country BD." in in_bangladesh.text
    assert 'aria-current="true"><img class="flag" src="/static/flags/bd.gif"' in in_bangladesh.text
    assert ranks(Client().get("/leaderboard/?org=BUET")) == [(1, "Alice", 1)]
    assert ranks(Client().get("/leaderboard/?country=IN")) == [(1, "bob", 3)]
    assert ranks(Client().get("/leaderboard/?org=Nowhere")) == []


def test_the_boards_link_to_each_other(mongodb, boards):
    page = Client().get("/leaderboard/last-30-days/").text
    for board in boards.values():
        assert f'href="/leaderboard/{board.slug}/"' in page
    assert 'aria-current="page">Last 30 days' in page


def test_the_all_time_board_has_no_date_picker(mongodb, now, boards):
    page = Client().get("/leaderboard/all-time/").text
    assert 'type="date"' not in page
    assert "Current totals" in page
    assert 'type="date"' in Client().get("/leaderboard/").text


@pytest.fixture
def calendar_boards(db, mongodb):
    week = Board.objects.create(slug="this-week", title="This week", window="week", position=5)
    month = Board.objects.create(slug="this-month", title="This month", window="month", position=6)
    mongo.ensure_indexes([week.slug, month.slug])
    return week, month


def test_calendar_boards_show_the_period_and_link_to_earlier_ones(
    mongodb, now, calendar_boards, problems, bob
):
    solve(bob, problems[0], dt.datetime(2020, 1, 10, 9, tzinfo=dt.UTC))  # the week before
    week = Client().get("/leaderboard/this-week/")
    assert "Week of 13 Jan 2020" in week.text
    assert ranks(week) == []
    assert 'href="?date=2020-01-12">Week of 6 Jan 2020' in week.text
    assert ranks(Client().get("/leaderboard/this-week/?date=2020-01-12")) == [(1, "bob", 1)]

    month = Client().get("/leaderboard/this-month/")
    assert "January 2020" in month.text
    assert ranks(month) == [(1, "bob", 1)]
    assert 'href="?date=2019-12-31">December 2019' in month.text
    assert "Problems solved · Calendar week (from Monday)" in week.text
    assert "Problems solved · Calendar month" in month.text


def test_a_rolling_board_names_its_window_with_a_capital(mongodb, now, boards):
    assert "Problems solved · Last 7 days · Today" in Client().get("/leaderboard/").text


# --- what a board row shows --------------------------------------------------------------------


def test_board_rows_show_the_flag_and_the_organization(mongodb, now, boards, problems, alice, bob):
    solve(alice, problems[0])
    solve(bob, problems[1])
    page = Client().get("/leaderboard/").text
    alice_row = row_html(page, "Alice")
    assert '<img class="flag" src="/static/flags/bd.gif" alt="BD" title="Bangladesh"' in alice_row
    assert '<td class="org"><a href="?org=BUET"' in alice_row
    assert 'title="India"' in row_html(page, "bob")
    assert '<th class="org">Organization</th>' in page


def test_the_top_one_and_ten_percent_have_a_colour_and_a_badge_and_the_rule_is_on_the_page(
    mongodb, now, boards
):
    # 100 programmers: rank 1 is the top 1%, ranks 2 to 10 the top 10%, rank 11 neither.
    crowd([3] + [2] * 9 + [1] * 90)
    page = Client().get("/leaderboard/").text
    assert 'class="top1">p00</a> <span class="tier top1"' in row_html(page, "p00")
    assert 'class="top10">p01</a> <span class="tier top10"' in row_html(page, "p01")
    assert 'class="tier' not in row_html(page, "p10")
    rule = "top 1% of the board (programmers with their score or more × 100 ≤ programmers on it)"
    assert rule in page


def test_rows_carry_their_rank_and_score_for_the_live_highlight(
    mongodb, now, boards, problems, bob
):
    solve(bob, problems[0])
    row = row_html(Client().get("/leaderboard/").text, "bob")
    assert f'data-key="{bob.pk}" data-rank="1" data-score="1"' in row


def test_display_mode_is_a_page_class_and_the_live_fragment_keeps_it(mongodb, now, boards):
    page = Client().get("/leaderboard/?display=1").text
    assert '<html lang="en" class="display">' in page
    assert 'data-live-url="/leaderboard/last-7-days/live/?display=1"' in page
    assert "Leave display mode" in page
    assert '<html lang="en" class="">' in Client().get("/leaderboard/").text


def test_my_submissions_show_problem_titles(mongodb, now, boards, problems, alice):
    client = signed_in(alice)
    answer(client, problems[0], "wrong")
    page = client.get("/submissions/").text
    assert '<a href="/problems/p1/">Problem 1</a>' in page


# --- the site as a whole ---------------------------------------------------------------------


def test_the_favicon_is_served_at_the_site_root(db):
    response = Client().get("/favicon.ico")
    assert response.status_code == 200
    assert b"".join(response.streaming_content).startswith(b"\x00\x00\x01\x00")  # an icon file


def test_the_bell_is_an_inline_svg_icon_not_an_emoji(mongodb, now, boards, alice):
    page = signed_in(alice).get("/leaderboard/").text
    bell = page[page.index('<a class="bell') : page.index("</a>", page.index('<a class="bell'))]
    assert '<svg class="icon"' in bell and "🔔" not in page


PAGES = ["/leaderboard/", "/leaderboard/all-time/", "/problems/", "/problems/p1/", "/u/Alice/"]


@pytest.mark.parametrize("path", [*PAGES, "/accounts/signup/", "/accounts/login/"])
def test_pages_allow_only_the_sites_own_scripts_and_styles(
    mongodb, now, boards, problems, alice, path
):
    response = signed_in(alice).get(path) if path in PAGES else Client().get(path)
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    for directive in ("default-src 'self'", "script-src 'self'", "style-src 'self'"):
        assert directive in policy
    assert "unsafe-inline" not in policy
    page = response.text
    # Nothing the policy would block: no inline script or style, no style attribute.
    assert "<style" not in page and " style=" not in page
    assert page.count("<script") == page.count('<script src="/static/')

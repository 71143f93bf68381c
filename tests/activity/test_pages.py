"""Live pages as a browser sees them: ETags and 304s, arrows, the following view, follow
buttons, the bell, notifications, alert settings, profile charts and the admin's alert rules."""

from __future__ import annotations

import datetime as dt
import re

import pytest
import time_machine
from django.test import Client

from activity import mongo as activity_mongo
from activity import selectors
from activity.models import AlertPreferences, AlertRule, Follow
from activity.services.alerts import alerts_check
from activity.services.history import history_snapshot
from solutions import live
from tests.activity.conftest import alert_rule, follow, opt_in, solve, solve_many
from tests.conftest import NOW

BOARD = "/leaderboard/last-7-days/"
BOARD_LIVE = "/leaderboard/last-7-days/live/"


def signed_in(programmer_or_user) -> Client:
    client = Client()
    client.force_login(getattr(programmer_or_user, "user", programmer_or_user))
    return client


def live_region(response) -> tuple[str, str]:
    """The page's live region: the URL its script polls and the ETag it starts from."""
    found = re.search(r'data-live-url="([^"]+)" data-live-etag="([^"]+)"', response.text)
    assert found, "the page has no live region"
    return found.group(1).replace("&amp;", "&"), found.group(2).replace("&quot;", '"')


@pytest.mark.parametrize("url", [BOARD, BOARD_LIVE, "/u/Alice/", "/u/Alice/live/"])
def test_a_live_page_answers_304_until_a_solve_then_200_with_a_new_etag(
    activity_db, now, boards, problems, alice, bob, url
):
    solve(alice, problems[0])
    client = Client()
    first = client.get(url)
    assert first.status_code == 200
    etag = first["ETag"]
    assert client.get(url, headers={"if-none-match": etag}).status_code == 304
    solve(bob, problems[0])
    now.shift(live.POLLED_VERSION_SECONDS)  # a poll sees a board as of the last whole second
    changed = client.get(url, headers={"if-none-match": etag})
    assert changed.status_code == 200
    assert changed["ETag"] != etag
    assert client.get(url, headers={"if-none-match": changed["ETag"]}).status_code == 304


def test_the_board_page_polls_its_fragment_which_shows_a_new_solve(
    activity_db, now, boards, problems, alice, bob
):
    solve(alice, problems[0])
    client = Client()
    page = client.get(BOARD + "?country=BD")
    url, etag = live_region(page)
    assert url == BOARD_LIVE + "?country=BD"
    # The page starts from the fragment's own ETag: the first poll is already a 304.
    assert client.get(url, headers={"if-none-match": etag}).status_code == 304
    bob.country = "BD"
    bob.save()
    solve(bob, problems[0])
    now.shift(live.POLLED_VERSION_SECONDS)
    fragment = client.get(url, headers={"if-none-match": etag})
    assert fragment.status_code == 200
    assert 'class="board"' in fragment.text and ">bob</a>" in fragment.text
    assert "<html" not in fragment.text  # just the part that moves
    # The script is served by the site itself, and the page works without it.
    assert '<script src="/static/solutions/live.js" defer>' in page.text
    assert ">Alice</a>" in page.text


def test_a_poll_with_nothing_new_costs_no_sql_query(
    activity_db, now, boards, problems, alice, django_assert_num_queries
):
    solve(alice, problems[0])
    client = Client()
    etag = client.get(BOARD_LIVE)["ETag"]
    with django_assert_num_queries(0):  # the boards and their version come from the cache
        assert client.get(BOARD_LIVE, headers={"if-none-match": etag}).status_code == 304


def test_the_whole_page_changes_its_etag_for_a_new_notification_and_never_hides_a_message(
    activity_db, now, boards, problems, alice
):
    client = signed_in(alice)
    client.get(BOARD)  # the first visit sets the CSRF cookie its forms use
    etag = client.get(BOARD)["ETag"]
    assert client.get(BOARD, headers={"if-none-match": etag}).status_code == 304
    activity_mongo.notifications().insert_one(
        {"_id": "n1", "user_id": alice.user.pk, "read": False, "created_at": NOW}
    )
    assert client.get(BOARD, headers={"if-none-match": etag}).status_code == 200
    # A message waiting to be shown (here: after "find me" found nothing) is never a 304.
    client.get(BOARD + "?find=me")
    response = client.get(BOARD, headers={"if-none-match": etag})
    assert response.status_code == 200 and "You are not on this board" in response.text


def test_board_rows_show_arrows_since_the_previous_day(
    activity_db, now, boards, problems, alice, bob, charlie
):
    with time_machine.travel(NOW - dt.timedelta(days=1), tick=False):
        solve_many(alice, problems[:2])
        solve(bob, problems[0])
    solve_many(bob, problems[1:3])
    solve(charlie, problems[0])
    text = Client().get(BOARD).text
    assert re.search(r"1 <span class=\"move up\"[^>]*>↑1</span>.*?>bob</a>", text, re.S)
    assert re.search(r"2 <span class=\"move down\"[^>]*>↓1</span>.*?>Alice</a>", text, re.S)
    assert re.search(r"3 <span class=\"move new\"[^>]*>new</span>.*?>charlie</a>", text, re.S)


def test_the_following_view_ranks_the_people_you_follow_with_their_global_ranks(
    activity_db, now, boards, problems, alice, bob, charlie, rivals
):
    for rival in rivals:
        solve_many(rival, problems[:3])
    solve_many(alice, problems[:2])
    solve(charlie, problems[0])
    follow(bob, alice)
    follow(bob, charlie)
    follow(bob, rivals[0])
    response = signed_in(bob).get(BOARD + "?view=following")
    rows = re.findall(r'<td class="rank">(\d+).*?>(\w+)</a>', response.text, re.S)
    assert rows == [("1", "dave"), ("5", "Alice"), ("6", "charlie")]  # Bob is not on the board
    assert "data-live-url" in response.text and "view=following" in response.text
    assert "Log in</a> to see the people you follow" in Client().get(BOARD + "?view=following").text


def test_following_and_unfollowing_take_a_post_with_a_csrf_token(activity_db, now, alice, bob):
    client = Client(enforce_csrf_checks=True)
    client.force_login(bob.user)
    profile = client.get("/u/Alice/")
    assert 'action="/u/Alice/follow/"' in profile.text and "0 followers" in profile.text
    token = client.cookies["csrftoken"].value
    assert client.get("/u/Alice/follow/").status_code == 405
    assert client.post("/u/Alice/follow/").status_code == 403
    response = client.post("/u/Alice/follow/", {"csrfmiddlewaretoken": token}, follow=True)
    assert "You follow Alice." in response.text and "1 follower." in response.text
    assert 'action="/u/Alice/unfollow/"' in response.text
    assert Follow.objects.filter(follower=bob.user, followed=alice).count() == 1
    response = client.post("/u/Alice/unfollow/", {"csrfmiddlewaretoken": token}, follow=True)
    assert "You no longer follow Alice." in response.text
    assert not Follow.objects.exists()
    # Nobody follows themself, and strangers are sent to log in.
    client.post("/u/bob/follow/", {"csrfmiddlewaretoken": token})
    assert not Follow.objects.exists()
    assert Client().post("/u/Alice/follow/").status_code == 302


def test_the_bell_counts_unread_notifications_and_the_page_marks_them_read(
    activity_db, now, boards, problems, alice, rivals
):
    board = boards["last-7-days"]
    alert_rule(board, places=3, minutes=60)
    opt_in(alice, own=True)
    solve_many(alice, problems[:2])
    for rival in rivals:
        solve(rival, problems[0])
    alerts_check(board=board)
    now.shift(dt.timedelta(minutes=5))
    for rival in rivals[:3]:
        solve_many(rival, problems[1:3])
    alerts_check(board=board)
    client = signed_in(alice)
    header = client.get("/problems/").text
    assert re.search(r'class="bell unread".*?<span class="count">1</span>', header, re.S)
    page = client.get("/notifications/")
    assert "You dropped 3 places on Last 7 days: from #1 to #4 within 60 minutes." in page.text
    assert 'class="unread"' in page.text
    assert selectors.notifications_unread_count(user=alice.user) == 0
    assert '<span class="count">' not in client.get("/problems/").text
    assert 'class="unread"' not in client.get("/notifications/").text


def test_programmers_opt_in_to_alerts_on_their_settings_page(activity_db, boards, alice):
    alert_rule(boards["last-7-days"], places=5, minutes=30)
    alert_rule(boards["all-time"], enabled=False)
    client = signed_in(alice)
    page = client.get("/account/alerts/")
    assert "a drop of 5 places or more within 30 minutes" in page.text
    assert page.text.count(">no alerts<") == 2  # last 30 days (no rule) and all time (off)
    response = client.post("/account/alerts/", {"my_rank_drops": "on"}, follow=True)
    assert "Your alert settings are saved." in response.text
    preferences = AlertPreferences.objects.get(user=alice.user)
    assert (preferences.my_rank_drops, preferences.followed_rank_drops) == (True, False)
    assert Client().get("/account/alerts/").status_code == 302


def test_the_profile_charts_rank_history_and_forecast_for_each_board(
    activity_db, now, boards, problems, alice
):
    with time_machine.travel(NOW - dt.timedelta(days=2), tick=False):
        solve(alice, problems[0])
    history_snapshot(board=boards["last-7-days"])
    text = Client().get("/u/Alice/").text
    assert text.count('<svg class="chart"') == 5  # rank on 3 boards, forecast on 2
    assert "Rank on Last 7 days, last 30 days" in text and "Forecast on Last 7 days" in text
    assert "Forecast on All time" not in text
    assert "2020-01-17: rank 1" in text  # a recorded point
    assert "2020-01-19: score 1" in text and "off the board from 2020-01-24" in text


def test_staff_set_a_boards_alert_rule_in_the_admin(activity_db, boards, staff):
    client = signed_in(staff)
    assert client.get("/admin/activity/alertrule/add/").status_code == 200
    response = client.post(
        "/admin/activity/alertrule/add/",
        {"board": boards["last-7-days"].pk, "enabled": "on", "places": "4", "minutes": "90"},
    )
    assert response.status_code == 302
    rule = AlertRule.objects.get()
    assert (rule.enabled, rule.places, rule.minutes) == (True, 4, 90)
    too_long = client.post(
        "/admin/activity/alertrule/add/",
        {"board": boards["all-time"].pk, "places": "4", "minutes": "100000"},
    )
    assert too_long.status_code == 200 and "Ensure this value is less than" in too_long.text


def test_the_live_script_polls_fast_while_in_use_and_slowly_when_hidden_or_idle():
    from django.contrib.staticfiles import finders

    script = open(finders.find("solutions/live.js")).read()
    assert "var FAST = 3000;" in script and "var SLOW = 60000;" in script
    assert "visibilitychange" in script and '"If-None-Match"' in script

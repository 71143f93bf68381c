"""Rank-drop alerts: a board's rule (a drop of at least X places within Y minutes) fires once,
for the programmer and for followers who opted in, never twice after a retry, and never in two
runs at once for one board."""

import datetime as dt
import threading
import time
from unittest import mock

import pytest
from django.core import mail

from activity import mongo as activity_mongo
from activity import selectors
from activity.services import notifications
from activity.services.alerts import alerts_check
from activity.services.locks import job_lock
from activity.tasks import alerts_check_task
from tests.activity.conftest import alert_rule, follow, opt_in, solve, solve_many

MINUTE = dt.timedelta(minutes=1)


@pytest.fixture
def board(boards):
    return boards["last-7-days"]


@pytest.fixture
def alice_on_top(activity_db, now, board, problems, alice, rivals):
    """Alice leads with 2 solves; the four rivals have 1 each. Alice's rank is sampled (#1)."""
    alert_rule(board, places=3, minutes=60)
    solve_many(alice, problems[:2])
    for rival in rivals:
        solve(rival, problems[0])
    return problems


def overtake(rivals, problems, count: int) -> None:
    """`count` rivals go from 1 to 3 solves, past Alice's 2."""
    for rival in rivals[:count]:
        solve_many(rival, problems[1:3])


def alice_notifications(alice) -> list[dict]:
    return selectors.notifications_recent(user=alice.user)


def test_an_alert_fires_once_at_exactly_x_places_within_y_minutes(
    alice_on_top, now, board, alice, rivals
):
    opt_in(alice, own=True)
    assert alerts_check(board=board).drops == 0
    now.shift(30 * MINUTE)
    overtake(rivals, alice_on_top, 3)
    report = alerts_check(board=board)
    assert (report.drops, report.notified, report.emailed) == (1, 1, 1)
    [notification] = alice_notifications(alice)
    assert notification["text"] == (
        "You dropped 3 places on Last 7 days: from #1 to #4 within 60 minutes."
    )
    [email] = mail.outbox
    assert email.to == ["alice@example.com"]
    assert email.subject == "You dropped 3 places on Last 7 days"
    assert "/leaderboard/last-7-days/" in email.body
    # The drop lasts: later runs find it again, and say nothing more.
    for _ in range(3):
        now.shift(MINUTE)
        assert alerts_check(board=board).notified == 0
    assert len(alice_notifications(alice)) == 1
    assert len(mail.outbox) == 1


def test_a_drop_of_one_place_fewer_does_not_alert(alice_on_top, now, board, alice, rivals):
    opt_in(alice, own=True)
    alerts_check(board=board)
    now.shift(30 * MINUTE)
    overtake(rivals, alice_on_top, 2)
    assert alerts_check(board=board).drops == 0
    assert alice_notifications(alice) == [] and mail.outbox == []


def test_a_drop_spread_over_more_than_the_window_does_not_alert(
    alice_on_top, now, board, alice, rivals
):
    opt_in(alice, own=True)
    alerts_check(board=board)  # #1
    now.shift(MINUTE)
    overtake(rivals, alice_on_top, 1)
    alerts_check(board=board)  # #2, one minute later
    now.shift(61 * MINUTE)
    for rival in rivals[1:3]:
        solve_many(rival, alice_on_top[1:3])
    # #4 now: three places below the #1 of 62 minutes ago, but only two below the #2 held
    # throughout the last hour.
    assert alerts_check(board=board).drops == 0
    assert alice_notifications(alice) == []


def test_programmers_who_did_not_opt_in_or_boards_without_an_enabled_rule_get_nothing(
    alice_on_top, now, board, boards, alice, rivals
):
    alerts_check(board=board)
    now.shift(30 * MINUTE)
    overtake(rivals, alice_on_top, 4)
    assert alerts_check(board=board).watched == 0
    opt_in(alice, own=True)
    board.alert_rule.enabled = False
    board.alert_rule.save()
    assert alerts_check(board=board).watched == 0
    assert alice_notifications(alice) == [] and mail.outbox == []


def test_followers_who_opted_in_are_alerted_about_whom_they_follow(
    alice_on_top, now, board, alice, bob, charlie, rivals
):
    follow(bob, alice)
    follow(charlie, alice)
    opt_in(bob, followed=True)  # Charlie follows Alice but did not opt in; nor did Alice.
    alerts_check(board=board)
    now.shift(10 * MINUTE)
    overtake(rivals, alice_on_top, 3)
    report = alerts_check(board=board)
    assert (report.watched, report.notified) == (1, 1)
    [notification] = selectors.notifications_recent(user=bob.user)
    assert notification["text"].startswith("Alice dropped 3 places on Last 7 days")
    assert alice_notifications(alice) == []
    assert selectors.notifications_recent(user=charlie.user) == []
    assert [email.to for email in mail.outbox] == [["bob@example.com"]]


def test_a_task_retried_after_a_crash_sends_no_second_notification(
    alice_on_top, now, board, alice, bob, rivals
):
    opt_in(alice, own=True)
    follow(bob, alice)
    opt_in(bob, followed=True)
    alerts_check(board=board)
    now.shift(30 * MINUTE)
    overtake(rivals, alice_on_top, 3)
    real_send_mail = notifications.send_mail
    calls = []

    def mail_server_fails_once(**email):
        calls.append(email["recipient_list"])
        if len(calls) == 2:  # the first email went out, the second crashes the task
            raise ConnectionError("the mail server hung up")
        return real_send_mail(**email)

    with mock.patch(
        "activity.services.notifications.send_mail", side_effect=mail_server_fails_once
    ):
        # apply() runs the task here, with its real retry policy (eager retries run at once).
        result = alerts_check_task.apply(args=[board.pk])
    assert result.successful()
    assert len(calls) == 3  # Alice, Bob (crash), Bob again on the retry
    assert sorted(email.to[0] for email in mail.outbox) == ["alice@example.com", "bob@example.com"]
    assert len(alice_notifications(alice)) == 1
    assert len(selectors.notifications_recent(user=bob.user)) == 1
    assert activity_mongo.notifications().count_documents({"emailed_at": None}) == 0
    # A message delivered again (a worker died before acknowledging it) changes nothing.
    alerts_check_task.apply(args=[board.pk])
    assert len(mail.outbox) == 2
    assert activity_mongo.notifications().count_documents({}) == 2


def test_the_lock_prevents_concurrent_runs_for_one_board(alice_on_top, board, boards, alice):
    opt_in(alice, own=True)
    with job_lock(f"alerts:{board.slug}") as held:
        assert held
        assert alerts_check(board=board).skipped
        assert activity_mongo.rank_samples().count_documents({}) == 0
        # Other boards are not held up.
        alert_rule(boards["last-30-days"])
        assert alerts_check(board=boards["last-30-days"]).watched == 1
    assert not alerts_check(board=board).skipped


def test_of_two_runs_started_together_only_one_takes_the_lock(activity_db, now):
    start, outcomes = threading.Barrier(8), []

    def run():
        start.wait()
        with job_lock("alerts:race") as held:
            outcomes.append(held)
            start.wait()  # everybody has tried before the winner lets go

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(outcomes) == [False] * 7 + [True]


def test_a_crashed_runs_lock_frees_itself_when_it_expires(alice_on_top, now, board, alice):
    opt_in(alice, own=True)
    # A worker took the lock and was killed: nothing released it. Locks are timed by the
    # server's clock, which the pinned clock of this process does not move.
    dead_worker = job_lock(f"alerts:{board.slug}", ttl=dt.timedelta(milliseconds=400))
    assert dead_worker.__enter__()
    assert alerts_check(board=board).skipped
    time.sleep(0.5)
    assert not alerts_check(board=board).skipped


def now_plus(delta: dt.timedelta) -> dt.datetime:
    from django.utils import timezone

    return timezone.now() + delta

"""Webhooks for the community's chats (issue 38, part 4): staff add a Discord, Slack or generic
receiver in the admin with the events it wants; a competition that starts, one that ends (with
its top 3), a new leader on a board and the rank drops of programmers who share them are sent
by Celery, once per hook and event, signed, retried with backoff, and logged in the admin.

Every test sends to a real HTTP server in a thread of the test (`Receiver`) that records what it
was sent and answers what it is told to. Celery runs its tasks eagerly here (a retry too, at
once), and the tasks queued on commit run when the test's block commits.
Alice and Bob take part; Staff runs the admin.
"""

from __future__ import annotations

import datetime as dt
import http.server
import json
import threading

import pytest
from django.test import Client

from activity.services.alerts import alerts_check
from activity.services.follows import alert_preferences_save
from competitions import services as competition_services
from integrations import messages, services, tasks
from integrations.models import Delivery, Webhook
from leaderboard_site.celery import app
from tests.activity.conftest import alert_rule, opt_in, solve, solve_many
from tests.conftest import NOW, make_programmer

MINUTE = dt.timedelta(minutes=1)


class Receiver:
    """A webhook receiver on 127.0.0.1: records each request and answers the next status of
    `statuses` (the last one for good), or never answers within the test's timeout (`hang`)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.statuses = [204]
        self.hang, self.released = threading.Event(), threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                if receiver.hang.is_set():
                    receiver.released.wait(5)
                    return
                status = (
                    receiver.statuses.pop(0) if len(receiver.statuses) > 1 else receiver.statuses[0]
                )
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def json(self, index: int = -1) -> dict:
        return json.loads(self.requests[index]["body"])


@pytest.fixture
def receiver():
    receiving = Receiver()
    receiving.thread.start()
    yield receiving
    receiving.released.set()
    receiving.server.shutdown()
    receiving.server.server_close()


@pytest.fixture(autouse=True)
def eager_celery():
    """Tasks run where they are queued, their retries at once (the countdown is not waited).
    Errors are not propagated: Celery's eager retry needs its `Retry` returned, not raised."""
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


def hook(receiver: Receiver, kind: str = Webhook.GENERIC, **events) -> Webhook:
    wanted = events or {"competition_started": True, "competition_ended": True}
    defaults = dict.fromkeys(Webhook.FIELDS.values(), False)
    return Webhook.objects.create(
        name=f"{kind} chat", url=receiver.url, kind=kind, **{**defaults, **wanted}
    )


@pytest.fixture
def contest(mongodb, now, problems, alice, bob):
    """A two-hour contest started 5 minutes ago, with problems A and B."""
    return competition_services.competition_create(
        slug="spring-cup",
        title="Spring <Cup> & co",
        start=NOW - 5 * MINUTE,
        end=NOW + dt.timedelta(hours=2),
        problems=problems[:2],
    )


def finish(contest, now, alice, bob, problems) -> None:
    """Alice solves A and B, Bob A; then the contest ends and is archived."""
    for programmer, problem in [(alice, problems[0]), (alice, problems[1]), (bob, problems[0])]:
        competition_services.competition_submit(
            competition=contest, programmer=programmer, problem=problem, answer=problem.answer
        )
    now.shift(dt.timedelta(hours=3))
    competition_services.competitions_archive_finished()


def test_a_generic_receiver_gets_the_top_3_signed(
    contest, now, alice, bob, problems, receiver, django_capture_on_commit_callbacks
):
    generic = hook(receiver)

    with django_capture_on_commit_callbacks(execute=True):
        finish(contest, now, alice, bob, problems)

    [request] = receiver.requests
    body, headers = request["body"], request["headers"]
    assert json.loads(body) == {
        "event": "competition.ended",
        "key": "competition.ended:spring-cup",
        "text": "Spring <Cup> & co has ended. Top 3: 1. Alice, 2. bob.",
        "url": "http://127.0.0.1:8000/competitions/spring-cup/standings/",
        "data": {
            "competition": "spring-cup",
            "top": [
                {"rank": 1, "handle": "Alice", "solved": 2, "penalty": 10},
                {"rank": 2, "handle": "bob", "solved": 1, "penalty": 5},
            ],
        },
    }
    assert headers["X-Leaderboard-Event"] == "competition.ended"
    timestamp = int(headers["X-Leaderboard-Timestamp"])
    signature = headers["X-Leaderboard-Signature"]
    assert messages.signature_is_valid(generic.secret, timestamp, body, signature)
    assert not messages.signature_is_valid("another-secret", timestamp, body, signature)
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("sent", 1, "")


def test_discord_and_slack_get_their_own_formats(
    contest, receiver, django_capture_on_commit_callbacks
):
    hook(receiver, Webhook.DISCORD, competition_started=True)
    hook(receiver, Webhook.SLACK, competition_started=True)

    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.webhooks_watch_task() == 2

    bodies = [json.loads(request["body"]) for request in receiver.requests]
    [discord] = [body for body in bodies if "embeds" in body]
    [slack] = [body for body in bodies if "embeds" not in body]
    assert discord == {
        "content": "Spring <Cup> & co has started: good luck!",
        "embeds": [
            {
                "title": "Spring <Cup> & co",
                "url": "http://127.0.0.1:8000/competitions/spring-cup/",
                "description": "Ends 2020-01-19 14:00 UTC",
            }
        ],
        "allowed_mentions": {"parse": []},
    }
    assert slack == {
        "text": "Spring &lt;Cup&gt; &amp; co has started: good luck!\nEnds 2020-01-19 14:00 UTC\n"
        "<http://127.0.0.1:8000/competitions/spring-cup/|Spring &lt;Cup&gt; &amp; co>"
    }


def test_a_start_is_sent_once_however_often_beat_looks(
    contest, now, receiver, django_capture_on_commit_callbacks
):
    hook(receiver, competition_started=True)

    with django_capture_on_commit_callbacks(execute=True):
        tasks.webhooks_watch_task()
        tasks.webhooks_watch_task()
        now.shift(20 * MINUTE)  # past the window: no longer news
        tasks.webhooks_watch_task()

    assert [json.loads(r["body"])["event"] for r in receiver.requests] == ["competition.started"]


def test_a_500_is_retried_until_the_receiver_takes_it(
    contest, receiver, django_capture_on_commit_callbacks
):
    receiver.statuses = [500, 503, 200]
    hook(receiver)

    with django_capture_on_commit_callbacks(execute=True):
        tasks.webhooks_watch_task()

    assert len(receiver.requests) == 3
    assert len({r["body"] for r in receiver.requests}) == 1  # the same event each time
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("sent", 3, "")


def test_a_receiver_that_keeps_failing_leaves_a_failed_delivery_in_the_log(
    contest, receiver, django_capture_on_commit_callbacks
):
    receiver.statuses = [500]
    hook(receiver)

    with django_capture_on_commit_callbacks(execute=True):
        tasks.webhooks_watch_task()

    delivery = Delivery.objects.get()
    assert len(receiver.requests) == tasks.MAX_RETRIES + 1
    assert (delivery.status, delivery.attempts) == ("failed", tasks.MAX_RETRIES + 1)
    assert delivery.last_error == "HTTP 500 from the receiver"


def test_a_404_is_not_retried(contest, receiver, django_capture_on_commit_callbacks):
    receiver.statuses = [404]
    hook(receiver)

    with django_capture_on_commit_callbacks(execute=True):
        tasks.webhooks_watch_task()

    delivery = Delivery.objects.get()
    assert len(receiver.requests) == 1
    assert (delivery.status, delivery.last_error) == ("failed", "HTTP 404 from the receiver")


def test_a_receiver_that_does_not_answer_times_out(contest, receiver, monkeypatch):
    monkeypatch.setattr(services, "TIMEOUT_SECONDS", 0.5)
    receiver.hang.set()
    hook(receiver)
    services.competitions_started_publish()

    with pytest.raises(services.DeliveryFailed, match="No answer: timed out"):
        services.delivery_send(delivery_id=Delivery.objects.get().pk)

    assert Delivery.objects.get().last_error == "No answer: timed out"


def test_the_task_run_twice_sends_once(contest, receiver):
    hook(receiver)
    services.competitions_started_publish()  # queued on commit: not run in this test's block
    delivery = Delivery.objects.get()

    assert tasks.webhook_deliver_task.apply(args=[delivery.pk]).get() == "sent"
    assert tasks.webhook_deliver_task.apply(args=[delivery.pk]).get() == "sent"

    assert len(receiver.requests) == 1
    assert Delivery.objects.get().attempts == 1


def test_an_inactive_hook_or_one_that_did_not_choose_the_event_gets_nothing(contest, receiver):
    hook(receiver, competition_ended=True)
    off = hook(receiver, competition_started=True)
    off.active = False
    off.save()

    assert services.competitions_started_publish() == 0
    assert not Delivery.objects.exists()


def test_a_new_leader_on_a_board_is_told_once(
    mongodb, now, boards, problems, alice, bob, receiver, django_capture_on_commit_callbacks
):
    hook(receiver, Webhook.SLACK, board_leader=True)
    solve_many(alice, problems[:2])
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.webhooks_watch_task() == 0  # the first look only records Alice
        solve_many(bob, problems[:3])
        assert tasks.webhooks_watch_task() == 3  # Bob leads all three boards
        assert tasks.webhooks_watch_task() == 0  # nothing moved
        solve(make_programmer("dave"), problems[5])
        assert tasks.webhooks_watch_task() == 0  # moved, but Bob still leads

    texts = sorted(json.loads(r["body"])["text"].split("\n")[0] for r in receiver.requests)
    assert texts == [
        "bob now leads All time with 3 (after Alice).",
        "bob now leads Last 30 days with 3 (after Alice).",
        "bob now leads Last 7 days with 3 (after Alice).",
    ]


def test_a_rank_drop_is_posted_only_for_a_programmer_who_shares_it(
    mongodb, now, boards, problems, alice, bob, receiver, django_capture_on_commit_callbacks
):
    board = boards["last-7-days"]
    hook(receiver, rank_drop=True)
    rivals = [make_programmer(handle) for handle in ("dave", "erin", "frank")]
    alert_rule(board, places=3, minutes=60)
    solve_many(alice, problems[:2])
    solve_many(bob, problems[:2])
    for rival in rivals:
        solve(rival, problems[0])
    opt_in(bob, own=True)  # alerted by email, not shared
    alert_preferences_save(
        user=alice.user, my_rank_drops=False, followed_rank_drops=False, share_rank_drops=True
    )
    alerts_check(board=board)
    now.shift(30 * MINUTE)
    for rival in rivals:
        solve_many(rival, problems[1:4])

    with django_capture_on_commit_callbacks(execute=True):
        alerts_check(board=board)
        alerts_check(board=board)  # the same drop, found again

    [request] = receiver.requests
    assert json.loads(request["body"])["text"] == (
        "Alice dropped 3 places on Last 7 days: from #1 to #4."
    )


# --- the admin -------------------------------------------------------------------------------


@pytest.fixture
def admin_client(staff):
    client = Client()
    client.force_login(staff)
    return client


def add_form(**fields) -> dict:
    return {"name": "Discord #general", "kind": "discord", "active": "on", **fields}


def test_staff_add_a_webhook_with_an_https_address(admin_client):
    form = add_form(url="https://discord.com/api/webhooks/1/abc", competition_ended="on")
    response = admin_client.post("/admin/integrations/webhook/add/", form)

    assert response.status_code == 302
    added = Webhook.objects.get()
    assert (added.kind, added.competition_ended, added.board_leader) == ("discord", True, False)
    assert len(added.secret) == 64


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("http://chat.example.com/hook", "Use an https:// address"),
        ("ftp://chat.example.com/hook", "Enter a valid URL."),
        ("not a url", "Enter a valid URL."),
    ],
)
def test_a_bad_address_is_a_form_error(admin_client, url, error):
    response = admin_client.post("/admin/integrations/webhook/add/", add_form(url=url))

    assert response.status_code == 200
    assert error in response.content.decode()
    assert not Webhook.objects.exists()


def test_http_is_allowed_while_developing(admin_client, settings):
    settings.DEBUG = True
    form = add_form(url="http://127.0.0.1:9000/hook", competition_started="on")

    assert admin_client.post("/admin/integrations/webhook/add/", form).status_code == 302


def test_a_webhook_without_events_is_refused(admin_client):
    form = add_form(url="https://discord.com/api/webhooks/1/abc")
    response = admin_client.post("/admin/integrations/webhook/add/", form)

    assert "Choose at least one event" in response.content.decode()


def test_the_delivery_log_is_read_only(admin_client, contest, receiver):
    hook(receiver)
    services.competitions_started_publish()
    delivery = Delivery.objects.get()

    page = admin_client.get(f"/admin/integrations/delivery/{delivery.pk}/change/")
    assert page.status_code == 200
    assert "competition.started:spring-cup" in page.content.decode()
    listing = admin_client.get("/admin/integrations/delivery/").content.decode()
    assert "Pending" in listing
    assert admin_client.get("/admin/integrations/delivery/add/").status_code == 403
    changed = admin_client.post(
        f"/admin/integrations/delivery/{delivery.pk}/change/", {"status": "sent"}
    )
    assert changed.status_code == 403
    assert Delivery.objects.get().status == "pending"

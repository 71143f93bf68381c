"""A real Celery worker (not eager mode) runs the alert flow: beat's fan-out task queues one
check per board, the worker picks it up from the broker, and the alert arrives. Once over the
default broker (the embedded MongoDB-compatible server, kombu's mongodb transport) and once over
Redis (skipped locally when Redis is absent, required in CI).

The worker runs in a thread of the test process (celery.contrib.testing), so it shares the test
database: hence transactional tests, whose rows are committed where the worker can see them (and
`serialized_rollback`, which brings back the boards the migrations seed after each flush).
"""

from __future__ import annotations

import time
import uuid
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import pytest
from celery.contrib.testing.worker import start_worker
from django.core import mail

from activity import mongo as activity_mongo
from activity import selectors, tasks
from activity.tasks import alerts_check_all_task, history_snapshot_all_task
from leaderboard_site.celery import app as celery_app
from tests.activity.conftest import alert_rule, opt_in, solve, solve_many
from tests.services_available import require_redis

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True, serialized_rollback=True)]


def _reset_connections(app) -> None:
    """Forget pooled broker connections, so the next message goes to the new broker URL."""
    app._pool = None
    if "amqp" in app.__dict__:
        app.amqp._producer_pool = None


@contextmanager
def worker_on(broker_url: str):
    saved = celery_app.conf.broker_url, celery_app.conf.broker_transport_options
    celery_app.conf.broker_url = broker_url
    # The virtual transports (MongoDB) poll for messages: every second by default.
    celery_app.conf.broker_transport_options = {"polling_interval": 0.1}
    _reset_connections(celery_app)
    try:
        celery_app.control.purge()  # nothing left over from an earlier run
        with start_worker(
            celery_app, pool="solo", perform_ping_check=False, loglevel="WARNING"
        ) as worker:
            yield worker
    finally:
        celery_app.conf.broker_url, celery_app.conf.broker_transport_options = saved
        _reset_connections(celery_app)


def wait_for(condition, seconds: float = 15.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"the worker did not get there within {seconds} s")


def alerts_flow_through_the_worker(boards, problems, alice, rivals) -> None:
    board = boards["last-7-days"]
    alert_rule(board, places=3, minutes=60)
    opt_in(alice, own=True)
    solve_many(alice, problems[:2])
    for rival in rivals:
        solve(rival, problems[0])

    # Beat's every-minute task; the worker fans it out and samples Alice at #1.
    alerts_check_all_task.delay()
    wait_for(lambda: activity_mongo.rank_samples().find_one({"programmer_id": alice.pk}))
    for rival in rivals[:3]:
        solve_many(rival, problems[1:3])
    alerts_check_all_task.delay()
    [notification] = wait_for(lambda: selectors.notifications_recent(user=alice.user))
    assert notification["text"].startswith("You dropped 3 places on Last 7 days")
    wait_for(lambda: mail.outbox)
    assert [email.to for email in mail.outbox] == [["alice@example.com"]]

    # The history beat task runs there too, each board's snapshot in steps of two ranks, each
    # step queuing the next through the broker.
    history_snapshot_all_task.delay()
    wait_for(lambda: activity_mongo.rank_history().count_documents({"board": board.slug}) == 5)


def test_a_real_worker_runs_the_alert_flow_over_the_embedded_server_broker(
    activity_db, embedded_server, boards, problems, alice, rivals, monkeypatch
):
    monkeypatch.setattr(tasks, "STEP_DOCUMENTS", 2)
    broker = urlsplit(embedded_server.uri)._replace(path=f"/broker_{uuid.uuid4().hex[:8]}")
    with worker_on(urlunsplit(broker)):
        alerts_flow_through_the_worker(boards, problems, alice, rivals)


def test_a_real_worker_runs_the_alert_flow_over_redis(
    activity_db, boards, problems, alice, rivals, monkeypatch
):
    require_redis()
    monkeypatch.setattr(tasks, "STEP_DOCUMENTS", 2)
    with worker_on("redis://127.0.0.1:6379/14"):
        alerts_flow_through_the_worker(boards, problems, alice, rivals)

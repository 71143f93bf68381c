"""Background work for live boards: rank history and rank-drop alerts (Celery beat runs the
`_all` tasks, see CELERY_BEAT_SCHEDULE). Tasks are interfaces: they take ids and call a service.

Each board's job is its own task, so one slow board does not hold up the others; the services
take a per-board lock, so two runs for one board never overlap, and they are idempotent, so a
retry (or a message delivered again after a worker died: acks are late) changes nothing twice.
"""

from __future__ import annotations

import logging

from celery import shared_task

from solutions.models import Board

from . import selectors
from .services.alerts import alerts_check
from .services.history import STEP_DOCUMENTS, history_snapshot

logger = logging.getLogger(__name__)

RETRY = {"autoretry_for": (Exception,), "retry_backoff": 5, "max_retries": 3}


@shared_task
def alerts_check_all_task() -> int:
    """Queue an alert check for every board with an enabled rule. Returns how many."""
    board_ids = list(selectors.alert_rules_enabled().values_list("board_id", flat=True))
    for board_id in board_ids:
        alerts_check_task.delay(board_id)
    return len(board_ids)


@shared_task(**RETRY)
def alerts_check_task(board_id: int) -> dict:
    board = Board.objects.filter(pk=board_id).first()
    if board is None:
        return {}
    report = alerts_check(board=board)
    if report.skipped:
        logger.info("Alert check for %s skipped: another run holds the lock", board.slug)
    return vars(report)


@shared_task
def history_snapshot_all_task() -> int:
    """Queue a rank-history snapshot for every board. Returns how many."""
    board_ids = list(Board.objects.values_list("pk", flat=True))
    for board_id in board_ids:
        history_snapshot_task.delay(board_id)
    return len(board_ids)


@shared_task(**RETRY)
def history_snapshot_task(board_id: int, carry_on: bool = False) -> dict:
    """A step of a board's snapshot (at most STEP_DOCUMENTS ranks); the rest is queued behind
    what else is queued, as a step that only carries on (see `activity.services.history`)."""
    board = Board.objects.filter(pk=board_id).first()
    if board is None:
        return {}
    report = history_snapshot(board=board, budget=STEP_DOCUMENTS, carry_on=carry_on)
    if report.more:
        history_snapshot_task.delay(board_id, carry_on=True)
    return vars(report)

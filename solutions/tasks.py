"""Background work of the boards. Each task takes ids or nothing and calls one service."""

from celery import shared_task

from . import services
from .models import Board


@shared_task
def solves_repair_task() -> int:
    """Count solves a crash left logged but unapplied (beat runs it every few minutes)."""
    return services.solves_repair()


@shared_task
def days_prepare_task() -> int:
    """Make tomorrow's orders in the last hour of today (beat runs it every ten seconds)."""
    return services.days_prepare()


@shared_task
def orders_prune_task() -> int:
    """Drop the board orders of days past the history kept (beat runs it every hour)."""
    return services.orders_prune()


@shared_task
def board_rebuild_task(board_id: int) -> int:
    """Rebuild one board from the solves log (the admin's "rebuild" action queues this)."""
    board = Board.objects.get(pk=board_id)
    return services.board_rebuild(board=board).changed

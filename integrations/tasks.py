"""Background work for webhooks (Celery tasks are interfaces: they take ids, call a service)."""

from __future__ import annotations

from celery import shared_task

from . import services

MAX_RETRIES = 8  # 10 s, 20 s, 40 s… about 42 minutes in all before a delivery is given up


@shared_task(bind=True, max_retries=MAX_RETRIES, acks_late=True)
def webhook_deliver_task(self, delivery_id: int) -> str:
    """Send one delivery; after a failure try again with exponential backoff, and after the
    last one (or an answer that retrying cannot change, a 4xx) leave it failed in the log."""
    try:
        return services.delivery_send(delivery_id=delivery_id)
    except services.DeliveryFailed as error:
        if not error.retry or self.request.retries >= self.max_retries:
            services.delivery_give_up(delivery_id=delivery_id)
            return "failed"
        countdown = services.delivery_backoff(self.request.retries)
        raise self.retry(exc=error, countdown=countdown) from error


@shared_task
def webhooks_watch_task() -> int:
    """Find the competitions that started and the boards with a new leader (beat: every 20 s).
    Returns how many deliveries it made."""
    return services.competitions_started_publish() + services.board_leaders_publish()

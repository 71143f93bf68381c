"""Webhook writes: events become deliveries (once per hook and event), and a delivery is sent.

Nothing here that a request or a solve runs makes an HTTP call: an event is recorded as one
`Delivery` a hook (unique by hook and event key, so an event found again, by a retry or a second
run, is not sent again) and its sending is queued for Celery when the transaction commits. The
task (`tasks.webhook_deliver_task`) calls `delivery_send`, which claims the delivery, POSTs it
with a timeout and records the answer; a failure is retried with exponential backoff.

Where events come from: a competition's archive (the `competition_archived` signal, sent once by
whoever archives it), a programmer who shares their rank drops dropping (`rank_drop_shared`,
sent by the alert check), and beat's `webhooks_watch_task` every 20 s for starts and leaders. A
board's leader is read only when its live version moved since the last look (one read of the
versions, then a page of one row of the boards that moved): a solve itself pays nothing.
"""

from __future__ import annotations

import datetime as dt
import time
import urllib.error
import urllib.request
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.urls import reverse
from django.utils import timezone

from competitions.models import Competition
from solutions import live, selectors
from solutions.clock import today
from solutions.models import Board, Programmer

from . import messages
from .models import (
    BOARD_LEADER,
    COMPETITION_ENDED,
    COMPETITION_STARTED,
    RANK_DROP,
    BoardLeader,
    Delivery,
    Webhook,
)

TIMEOUT_SECONDS = 10  # for the receiver to answer one POST
CLAIM = dt.timedelta(seconds=TIMEOUT_SECONDS + 20)  # a sender that died lets go after this
STARTED_WINDOW = dt.timedelta(minutes=15)  # a start older than this is not news any more
USER_AGENT = "leaderboard-webhooks/1"


class DeliveryFailed(Exception):
    """The receiver did not take the delivery. `retry`: whether trying again may help (a
    network error, a timeout, a 5xx or a 429; not another 4xx: the address or the hook is wrong)."""

    def __init__(self, message: str, retry: bool = True) -> None:
        super().__init__(message)
        self.retry = retry


# --- events into deliveries ------------------------------------------------------------------


def hooks_wanting(event: str) -> QuerySet[Webhook]:
    return Webhook.objects.filter(active=True, **{Webhook.FIELDS[event]: True})


def event_publish(*, event: str, key: str, payload: dict) -> int:
    """Record the event for every active hook that wants it, once per hook whatever the number
    of calls, and queue each new delivery's sending on commit. Returns how many are new."""
    from . import tasks  # the tasks call these services: imported when first used

    new = []
    for hook in hooks_wanting(event):
        delivery, created = Delivery.objects.get_or_create(
            hook=hook, event_key=key, defaults={"event": event, "payload": payload}
        )
        if created:
            new.append(delivery.pk)
    for delivery_id in new:
        transaction.on_commit(partial(tasks.webhook_deliver_task.delay, delivery_id))
    return len(new)


def _site_url(name: str, *args: object) -> str:
    return settings.SITE_URL.rstrip("/") + reverse(name, args=args)


def competition_started_publish(*, competition: Competition) -> int:
    url = _site_url("competition", competition.slug)
    start = competition.start.isoformat()
    payload = {
        "text": f"{competition.title} has started: good luck!",
        "title": competition.title,
        "url": url,
        "lines": [f"Ends {competition.end:%Y-%m-%d %H:%M} UTC"],
        "data": {
            "competition": competition.slug,
            "start": start,
            "end": competition.end.isoformat(),
        },
    }
    key = f"{COMPETITION_STARTED}:{competition.slug}:{start}"
    return event_publish(event=COMPETITION_STARTED, key=key, payload=payload)


def competitions_started_publish() -> int:
    """Tell the hooks about every competition that started in the last STARTED_WINDOW and is
    still running (beat looks every 20 s; each start is sent once a hook)."""
    if not hooks_wanting(COMPETITION_STARTED).exists():
        return 0
    now = timezone.now()
    started = Competition.objects.filter(
        start__lte=now, start__gt=now - STARTED_WINDOW, end__gt=now
    )
    return sum(competition_started_publish(competition=c) for c in started)


def competition_ended_publish(*, competition: Competition) -> int:
    """The end of an archived competition with its top 3 from the final standings."""
    rows = (competition.final_standings or {}).get("rows", [])
    top = [row for row in rows if row.get("rank") is not None][:3]
    lines = [
        f"{row['rank']}. {row['handle']}: {row['solved']} solved, penalty {row['penalty']}"
        for row in top
    ]
    podium = ", ".join(f"{row['rank']}. {row['handle']}" for row in top) or "nobody solved"
    payload = {
        "text": f"{competition.title} has ended. Top 3: {podium}.",
        "title": f"{competition.title}: final standings",
        "url": _site_url("competition_standings", competition.slug),
        "lines": lines or ["Nobody solved a problem."],
        "data": {
            "competition": competition.slug,
            "top": [{k: row[k] for k in ("rank", "handle", "solved", "penalty")} for row in top],
        },
    }
    key = f"{COMPETITION_ENDED}:{competition.slug}"
    return event_publish(event=COMPETITION_ENDED, key=key, payload=payload)


def on_competition_archived(*, competition: Competition, **_signal: object) -> None:
    competition_ended_publish(competition=competition)


def on_rank_drop_shared(*, rule, programmer: Programmer, drop, **_signal: object) -> None:
    """A programmer who shares their rank drops dropped (see `activity.signals`)."""
    board = rule.board
    payload = {
        "text": (
            f"{programmer.handle} dropped {drop.places} places on {board.title}: "
            f"from #{drop.best_rank} to #{drop.rank}."
        ),
        "title": f"{programmer.handle} on {board.title}",
        "url": _site_url("profile", programmer.handle),
        "lines": [f"#{drop.best_rank} → #{drop.rank}"],
        "data": {
            "board": board.slug,
            "handle": programmer.handle,
            "from_rank": drop.best_rank,
            "to_rank": drop.rank,
        },
    }
    key = f"{RANK_DROP}:{board.slug}:{programmer.pk}:{int(drop.best_at.timestamp() * 1000)}"
    event_publish(event=RANK_DROP, key=key, payload=payload)


def board_leaders_publish() -> int:
    """Tell the hooks about each board whose leader today changed since the last look. Only the
    boards whose live version moved are read (a page of one row each). The first look at a board
    only records its leader; nobody leading is never news. Returns the new deliveries."""
    if not hooks_wanting(BOARD_LEADER).exists():
        return 0
    boards = list(selectors.boards_visible())
    versions = live.board_versions(board.slug for board in boards)
    now_day, new = today(), 0
    for board in boards:
        version = versions.get(board.slug, 0)
        seen, created = BoardLeader.objects.get_or_create(
            board=board, defaults={"day": now_day, "version": -1}
        )
        if seen.version == version and seen.day == now_day:
            continue
        rows = selectors.board_page(board=board, day=now_day, page_size=1).rows
        leader = rows[0] if rows else None
        leader_id = leader.programmer_id if leader else None
        # Compare and swap: of two looks at once, one records the change and tells it.
        swapped = BoardLeader.objects.filter(
            pk=seen.pk, programmer_id=seen.programmer_id, changes=seen.changes
        ).update(day=now_day, version=version, programmer_id=leader_id, changes=F("changes") + 1)
        news = not created and leader_id not in (None, seen.programmer_id)
        if swapped and news:
            new += _leader_publish(board, leader, seen.programmer_id, seen.changes + 1)
    return new


def _leader_publish(board: Board, leader: selectors.Row, previous_id: int | None, n: int) -> int:
    previous = Programmer.objects.filter(pk=previous_id).values_list("handle", flat=True).first()
    was = f" (after {previous})" if previous else ""
    payload = {
        "text": f"{leader.handle} now leads {board.title} with {leader.score}{was}.",
        "title": board.title,
        "url": _site_url("board", board.slug),
        "lines": [f"1. {leader.handle}: {leader.score}"],
        "data": {
            "board": board.slug,
            "handle": leader.handle,
            "score": leader.score,
            "previous": previous,
        },
    }
    key = f"{BOARD_LEADER}:{board.slug}:{n}"
    return event_publish(event=BOARD_LEADER, key=key, payload=payload)


# --- sending ---------------------------------------------------------------------------------


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A webhook answers where it was asked: a redirect is a failure, not a GET elsewhere."""

    def redirect_request(self, *args, **kwargs):
        return None


_opener = urllib.request.build_opener(_NoRedirects)


def _post(url: str, body: bytes, headers: dict[str, str]) -> int:
    """POST the body; the receiver's status (raises DeliveryFailed when there is none)."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with _opener.open(request, timeout=TIMEOUT_SECONDS) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except (urllib.error.URLError, OSError) as error:  # refused, unreachable, timed out
        raise DeliveryFailed(f"No answer: {getattr(error, 'reason', error)}") from error


def delivery_send(*, delivery_id: int) -> str:
    """Send a pending delivery once: claim it (two runs never send it at once, and a sent one is
    never sent again), POST it signed, record the attempt. Returns its status; raises
    DeliveryFailed when the receiver did not take it (the task retries)."""
    now = timezone.now()
    claimable = Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
    claimed = Delivery.objects.filter(claimable, pk=delivery_id, status=Delivery.PENDING).update(
        claimed_until=now + CLAIM, attempts=F("attempts") + 1
    )
    delivery = Delivery.objects.select_related("hook").filter(pk=delivery_id).first()
    if not claimed or delivery is None:
        return delivery.status if delivery else "gone"
    hook = delivery.hook
    body = messages.body_of(hook.kind, delivery.event, delivery.event_key, delivery.payload)
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        messages.EVENT_HEADER: delivery.event,
        messages.TIMESTAMP_HEADER: str(timestamp),
        messages.SIGNATURE_HEADER: messages.signature(hook.secret, timestamp, body),
    }
    try:
        status = _post(hook.url, body, headers)
    except DeliveryFailed as error:
        _attempt_failed(delivery_id, str(error))
        raise
    if 200 <= status < 300:
        Delivery.objects.filter(pk=delivery_id).update(
            status=Delivery.SENT, sent_at=timezone.now(), last_error="", claimed_until=None
        )
        return Delivery.SENT
    message = f"HTTP {status} from the receiver"
    _attempt_failed(delivery_id, message)
    raise DeliveryFailed(message, retry=status >= 500 or status == 429)


def _attempt_failed(delivery_id: int, error: str) -> None:
    Delivery.objects.filter(pk=delivery_id).update(last_error=error[:1000], claimed_until=None)


def delivery_give_up(*, delivery_id: int) -> None:
    """No more retries: the delivery stays in the log as failed, with its last error."""
    Delivery.objects.filter(pk=delivery_id, status=Delivery.PENDING).update(status=Delivery.FAILED)


def delivery_backoff(retries: int) -> int:
    """Seconds before retry number `retries` + 1: 10, 20, 40… up to an hour."""
    return min(10 * 2**retries, 3600)

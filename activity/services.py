"""Writes: follows, alert preferences, rank-history snapshots, rank samples, rank-drop alerts with
their notifications and emails, and the locks that keep each board's jobs single.

The jobs run from Celery beat (see `tasks`) and are safe to run again at any time: history
documents are keyed by (board, programmer, day), rank samples by (board, programmer), and a
notification by its drop, so a retry, a crash half-way or a second run changes nothing twice.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from pymongo import UpdateOne
from pymongo.errors import DuplicateKeyError

from solutions import leaderboard, live
from solutions import selectors as board_selectors
from solutions.leaderboard import days_kept, reading
from solutions.models import Board, Programmer
from solutions.services import today

from . import mongo, samples, selectors
from .models import AlertPreferences, AlertRule, Follow
from .signals import rank_drop_shared

logger = logging.getLogger(__name__)

FOLLOW_LIMIT = 500
LOCK_TTL = dt.timedelta(minutes=5)
WRITE_BATCH = 1000
SAMPLES_REFRESH = dt.timedelta(hours=1)  # keeps a watched programmer's samples from expiring


# --- follows and preferences -----------------------------------------------------------------


def follow_create(*, user: AbstractBaseUser, programmer: Programmer) -> Follow:
    """Follow a programmer (following twice is a no-op). Raises ValidationError for oneself or
    past `FOLLOW_LIMIT`."""
    if getattr(user, "programmer", None) == programmer:
        raise ValidationError("You cannot follow yourself.", code="self")
    existing = Follow.objects.filter(follower=user, followed=programmer).first()
    if existing:
        return existing
    if Follow.objects.filter(follower=user).count() >= FOLLOW_LIMIT:
        raise ValidationError(f"You can follow up to {FOLLOW_LIMIT} programmers.", code="limit")
    try:
        with transaction.atomic():
            return Follow.objects.create(follower=user, followed=programmer)
    except IntegrityError:  # a double click racing itself
        return Follow.objects.get(follower=user, followed=programmer)


def follow_delete(*, user: AbstractBaseUser, programmer: Programmer) -> bool:
    """Stop following. False when the user was not following."""
    deleted, _ = Follow.objects.filter(follower=user, followed=programmer).delete()
    return deleted > 0


def alert_preferences_save(
    *,
    user: AbstractBaseUser,
    my_rank_drops: bool,
    followed_rank_drops: bool,
    share_rank_drops: bool = False,
) -> AlertPreferences:
    preferences, _ = AlertPreferences.objects.update_or_create(
        user=user,
        defaults={
            "my_rank_drops": my_rank_drops,
            "followed_rank_drops": followed_rank_drops,
            "share_rank_drops": share_rank_drops,
        },
    )
    return preferences


# --- locks -----------------------------------------------------------------------------------


_MILLISECOND = dt.timedelta(milliseconds=1)


@contextmanager
def job_lock(name: str, ttl: dt.timedelta = LOCK_TTL) -> Iterator[bool]:
    """Hold the lock `name` for the block; yields False when somebody else holds it.

    One document per lock: taking it is an upsert that only matches an expired lock, so while
    it is held the upsert collides on `_id` and fails. A worker killed mid-job leaves the lock
    behind, but only until it expires."""
    token = uuid.uuid4().hex
    server_now = {"$toLong": "$$NOW"}  # the server's clock, whatever this machine's says
    expired = {"$lte": [{"$toLong": {"$ifNull": ["$expires_at", 0]}}, server_now]}
    try:
        mongo.locks().update_one(
            {"_id": name, "$expr": expired},
            [{"$set": {"owner": token, "expires_at": {"$add": ["$$NOW", ttl // _MILLISECOND]}}}],
            upsert=True,
        )
        acquired = True
    except DuplicateKeyError:
        acquired = False
    try:
        yield acquired
    finally:
        if acquired:
            mongo.locks().delete_one({"_id": name, "owner": token})


# --- rank history ----------------------------------------------------------------------------


@dataclass
class HistoryReport:
    board: str
    skipped: bool = False
    days: list[int] = field(default_factory=list)
    documents: int = 0


def history_record(*, board: Board, day: int) -> int:
    """Record every programmer's rank on the board of `day`: one pass over the board in order
    (ranks by position, shared ones by score), written in batches. Returns how many."""
    key = board_selectors.day_key(board, day)
    total = leaderboard.board_total(reading.histogram_read(board.slug, key))
    expires = dt.datetime.combine(
        leaderboard.day_to_date(day + settings.ACTIVITY_HISTORY_DAYS), dt.time(), tzinfo=dt.UTC
    )
    operations, position, rank, previous_score = [], 0, 0, None
    for member in reading.members_in_order(board.slug, key):
        score = member.score
        position += 1
        if board.ties == Board.UNIQUE or score != previous_score:
            rank = position
        previous_score = score
        operations.append(
            UpdateOne(
                {"_id": selectors.history_id(board.slug, member.programmer_id, day)},
                {
                    "$set": {
                        "board": board.slug,
                        "programmer_id": member.programmer_id,
                        "day": day,
                        "rank": rank,
                        "score": score,
                        "total": total,
                        "expires_at": expires,
                    }
                },
                upsert=True,
            )
        )
        if len(operations) >= WRITE_BATCH:
            mongo.rank_history().bulk_write(operations, ordered=False)
            operations = []
    if operations:
        mongo.rank_history().bulk_write(operations, ordered=False)
    return position


def history_snapshot(*, board: Board) -> HistoryReport:
    """Bring a board's rank history up to date (beat runs it every few minutes).

    Records today's ranks when the board changed since the last run or the day is new, and the
    final ranks of the days that ended since then: rolling and calendar boards read those from
    the engine (a past day's sums are its final board), up to `CHART_DAYS` back, so the first
    run fills the charts at once. All-time boards have no per-day sums: their day is the last
    snapshot taken that day."""
    report = HistoryReport(board=board.slug)
    with job_lock(f"history:{board.slug}") as acquired:
        if not acquired:
            report.skipped = True
            return report
        state_id = f"history:{board.slug}"
        state = mongo.state().find_one({"_id": state_id}) or {}
        now_day = today()
        version = live.board_version(board.slug)  # read first: a solve meanwhile re-triggers
        if not board.spec.is_all_time:
            first = max(
                state.get("final_day", now_day - selectors.CHART_DAYS) + 1,
                days_kept.history_from(now_day),
            )
            report.days += list(range(first, now_day))
        if state.get("version") != version or state.get("day") != now_day:
            report.days.append(now_day)
        for day in report.days:
            report.documents += history_record(board=board, day=day)
        mongo.state().update_one(
            {"_id": state_id},
            {"$set": {"final_day": now_day - 1, "version": version, "day": now_day}},
            upsert=True,
        )
    return report


# --- rank-drop alerts ------------------------------------------------------------------------


@dataclass(frozen=True)
class Recipient:
    user_id: int
    email: str
    own: bool  # the alert is about the recipient themself


@dataclass
class AlertReport:
    board: str
    skipped: bool = False
    watched: int = 0
    drops: int = 0
    notified: int = 0
    emailed: int = 0


def alert_watch_list() -> dict[int, list[Recipient]]:
    """{programmer id: who to tell when they drop}: programmers who opted in about themselves,
    and the programmers followed by users who opted in about those they follow.

    Emails go to `User.email`, which holds only a confirmed address: the account page sets it
    once the link mailed to the address is followed, and keeps an unconfirmed one aside
    (`solutions.account_services`). Without one, the alert is an in-app notification only."""
    watch: dict[int, list[Recipient]] = defaultdict(list)
    own = AlertPreferences.objects.filter(
        my_rank_drops=True, user__is_active=True, user__programmer__isnull=False
    ).values_list("user_id", "user__email", "user__programmer__id")
    for user_id, email, programmer_id in own:
        watch[programmer_id].append(Recipient(user_id, email, own=True))
    followed = Follow.objects.filter(
        follower__alert_preferences__followed_rank_drops=True, follower__is_active=True
    ).values_list("follower_id", "follower__email", "followed_id")
    for user_id, email, programmer_id in followed:
        watch[programmer_id].append(Recipient(user_id, email, own=False))
    for programmer_id in rank_drops_shared():
        watch.setdefault(programmer_id, [])  # watched; nobody notified, the chats are told
    return dict(watch)


def rank_drops_shared() -> set[int]:
    """The programmers who chose to have their rank drops posted to the community's chats."""
    shared = AlertPreferences.objects.filter(
        share_rank_drops=True, user__is_active=True, user__programmer__isnull=False
    )
    return set(shared.values_list("user__programmer__id", flat=True))


def samples_record(
    *, board: Board, ranks: dict[int, int | None], now: dt.datetime
) -> dict[int, list[samples.Change]]:
    """Add the current ranks to each watched programmer's rank changes (written only when the
    rank changed, or now and then so the samples of somebody still watched do not expire)."""
    ids = {pid: f"{board.slug}:{pid}" for pid in ranks}
    stored = {
        doc["programmer_id"]: doc
        for doc in mongo.rank_samples().find({"_id": {"$in": list(ids.values())}})
    }
    changes_of, operations = {}, []
    for pid, rank in ranks.items():
        document = stored.get(pid, {})
        before = document.get("changes", [])
        after = samples.with_rank(before, rank, now, keep=mongo.MAX_CHANGES)
        changes_of[pid] = after
        if after is not before or now - document["updated_at"] > SAMPLES_REFRESH:
            operations.append(
                UpdateOne(
                    {"_id": ids[pid]},
                    {
                        "$set": {
                            "board": board.slug,
                            "programmer_id": pid,
                            "changes": after,
                            "updated_at": now,
                        }
                    },
                    upsert=True,
                )
            )
    if operations:
        mongo.rank_samples().bulk_write(operations, ordered=False)
    return changes_of


def alerts_check(*, board: Board) -> AlertReport:
    """Sample the ranks of everybody watched on a board and alert on drops (beat: every minute).

    Never runs twice at once for a board (a lock). A drop already notified is found again on
    the next runs while it lasts; its notification key makes that a no-op."""
    report = AlertReport(board=board.slug)
    rule = AlertRule.objects.filter(board=board, enabled=True).select_related("board").first()
    if rule is None:
        return report
    with job_lock(f"alerts:{board.slug}") as acquired:
        if not acquired:
            report.skipped = True
            return report
        now = samples.to_millis(timezone.now())
        watch = alert_watch_list()
        shared = rank_drops_shared()
        programmers = Programmer.objects.in_bulk(list(watch))
        report.watched = len(programmers)
        places = selectors.places_of(board=board, day=today(), programmers=programmers.values())
        ranks = {pid: places[pid].rank if pid in places else None for pid in programmers}
        for pid, changes in samples_record(board=board, ranks=ranks, now=now).items():
            drop = samples.rank_drop(changes, now, rule.minutes)
            if drop is None or drop.places < rule.places:
                continue
            report.drops += 1
            if pid in shared:
                rank_drop_shared.send(
                    sender=AlertRule, rule=rule, programmer=programmers[pid], drop=drop
                )
            for recipient in watch[pid]:
                created, emailed = notification_send(
                    rule=rule, programmer=programmers[pid], recipient=recipient, drop=drop, now=now
                )
                report.notified += created
                report.emailed += emailed
    return report


def notification_key(rule: AlertRule, programmer_id: int, user_id: int, drop: samples.Drop) -> str:
    """One key per (rule, programmer, recipient, drop): the drop is named by when its best rank
    was reached."""
    return f"rank-drop:{rule.pk}:{programmer_id}:{user_id}:{int(drop.best_at.timestamp() * 1000)}"


def notification_send(
    *,
    rule: AlertRule,
    programmer: Programmer,
    recipient: Recipient,
    drop: samples.Drop,
    now: dt.datetime,
) -> tuple[bool, bool]:
    """Store the in-app notification (once: its key is its `_id`), then email it unless that
    was done already. Returns (stored now, emailed now).

    The notification is stored before the email and marked emailed after it, so a crash in
    between sends the email on the retry; only a crash right after sending and before marking
    can send one twice."""
    document, created = _notification_store(
        _notification_document(rule, programmer, recipient, drop, now)
    )
    if document.get("emailed_at") is not None:
        return created, False
    _notification_email(document, recipient.email)
    return created, bool(recipient.email)


def _notification_document(
    rule: AlertRule,
    programmer: Programmer,
    recipient: Recipient,
    drop: samples.Drop,
    now: dt.datetime,
) -> dict:
    return {
        "_id": notification_key(rule, programmer.pk, recipient.user_id, drop),
        "user_id": recipient.user_id,
        "kind": "rank_drop",
        "board": rule.board.slug,
        "board_title": rule.board.title,
        "programmer_id": programmer.pk,
        "handle": programmer.handle,
        "own": recipient.own,
        "from_rank": drop.best_rank,
        "to_rank": drop.rank,
        "minutes": rule.minutes,
        "created_at": now,
        "read": False,
        "emailed_at": None,
    }


def _notification_store(document: dict) -> tuple[dict, bool]:
    """Insert the notification, or read the one an earlier run stored under the same key.
    Returns (the stored document, inserted now)."""
    try:
        mongo.notifications().insert_one(document)
        return document, True
    except DuplicateKeyError:
        return mongo.notifications().find_one({"_id": document["_id"]}), False


def _notification_email(document: dict, email: str) -> None:
    """Email the notification (when the recipient has an address), then mark it emailed
    either way so no later run tries again."""
    if email:
        send_mail(
            subject=selectors.notification_subject(document),
            message=notification_email_body(document),
            from_email=None,
            recipient_list=[email],
        )
    mongo.notifications().update_one(
        {"_id": document["_id"]}, {"$set": {"emailed_at": timezone.now()}}
    )


def notification_email_body(document: dict) -> str:
    board_url = settings.SITE_URL.rstrip("/") + reverse("board", args=[document["board"]])
    settings_url = settings.SITE_URL.rstrip("/") + reverse("activity:alert_settings")
    return (
        f"{selectors.notification_text(document)}\n\n"
        f"See the board: {board_url}\n\n"
        f"You get this email because you opted in to rank-drop alerts. "
        f"Change that on {settings_url}\n"
    )


def notifications_mark_read(*, user: AbstractBaseUser) -> int:
    """Mark all the user's notifications read. Returns how many were unread."""
    return (
        mongo.notifications()
        .update_many({"user_id": user.pk, "read": False}, {"$set": {"read": True}})
        .modified_count
    )

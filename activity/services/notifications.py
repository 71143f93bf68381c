"""The notifications of rank drops: stored in-app once per drop and recipient (the key is the
`_id`), then emailed to a confirmed address, marked emailed so no later run sends it again."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.mail import send_mail
from django.urls import reverse
from django.utils import timezone
from pymongo.errors import DuplicateKeyError

from solutions.models import Programmer

from .. import mongo, samples, selectors
from ..models import AlertRule


@dataclass(frozen=True)
class Recipient:
    user_id: int
    email: str
    own: bool  # the alert is about the recipient themself


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

"""Webhooks staff add in the admin, and the log of what was sent to each (SQL)."""

from __future__ import annotations

import secrets
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import models

from solutions.models import Board

COMPETITION_STARTED = "competition.started"
COMPETITION_ENDED = "competition.ended"
BOARD_LEADER = "board.leader"
RANK_DROP = "rank.drop"
EVENTS = {
    COMPETITION_STARTED: "A competition starts",
    COMPETITION_ENDED: "A competition ends (with its top 3)",
    BOARD_LEADER: "A new leader on a board",
    RANK_DROP: "A programmer who shares their rank drops drops",
}


def webhook_url_validator(url: str) -> None:
    """An http(s) address; https only unless DEBUG is on (a development receiver)."""
    URLValidator(schemes=["http", "https"])(url)
    if urlsplit(url).scheme != "https" and not settings.DEBUG:
        raise ValidationError("Use an https:// address: deliveries carry a signature and data.")


def new_secret() -> str:
    return secrets.token_hex(32)


class Webhook(models.Model):
    """A chat (Discord, Slack) or any receiver told about the events it chose, by a POST."""

    DISCORD, SLACK, GENERIC = "discord", "slack", "generic"
    KINDS = [
        (DISCORD, "Discord (content and embeds)"),
        (SLACK, "Slack (text)"),
        (GENERIC, "Generic (JSON, signed)"),
    ]

    name = models.CharField(max_length=100, help_text="Which chat or channel, for staff.")
    url = models.URLField(
        max_length=500,
        validators=[webhook_url_validator],
        help_text="The webhook address the chat gave you (https).",
    )
    kind = models.CharField(max_length=10, choices=KINDS, default=DISCORD)
    secret = models.CharField(
        max_length=64,
        default=new_secret,
        help_text="Signs each delivery: give it to a generic receiver.",
    )
    active = models.BooleanField(default=True)
    competition_started = models.BooleanField(
        default=True, verbose_name=EVENTS[COMPETITION_STARTED]
    )
    competition_ended = models.BooleanField(default=True, verbose_name=EVENTS[COMPETITION_ENDED])
    board_leader = models.BooleanField(default=False, verbose_name=EVENTS[BOARD_LEADER])
    rank_drop = models.BooleanField(default=False, verbose_name=EVENTS[RANK_DROP])
    created_at = models.DateTimeField(auto_now_add=True)

    # Event name → the field that subscribes to it.
    FIELDS = {
        COMPETITION_STARTED: "competition_started",
        COMPETITION_ENDED: "competition_ended",
        BOARD_LEADER: "board_leader",
        RANK_DROP: "rank_drop",
    }

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.active and not any(getattr(self, field) for field in self.FIELDS.values()):
            raise ValidationError("Choose at least one event, or make the webhook inactive.")


class Delivery(models.Model):
    """One event for one webhook: made once (unique by hook and event key), then sent by a Celery
    task until the receiver takes it or the retries run out."""

    PENDING, SENT, FAILED = "pending", "sent", "failed"
    STATUSES = [(PENDING, "Pending"), (SENT, "Sent"), (FAILED, "Failed")]

    hook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40, choices=list(EVENTS.items()))
    event_key = models.CharField(max_length=200)
    payload = models.JSONField()
    status = models.CharField(max_length=10, choices=STATUSES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    # Whoever sends it holds it until then, so two runs of the task never send it at once.
    claimed_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "deliveries"
        constraints = [
            models.UniqueConstraint(fields=["hook", "event_key"], name="delivery_once"),
        ]

    def __str__(self) -> str:
        return f"{self.event_key} to {self.hook}"


class BoardLeader(models.Model):
    """The leader last seen on a board today (None: nobody on it), so a new one is told once."""

    board = models.OneToOneField(Board, on_delete=models.CASCADE, related_name="+")
    day = models.IntegerField()
    programmer_id = models.IntegerField(null=True)
    version = models.BigIntegerField(default=-1)  # the board's live version when it was read
    changes = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"Leader of {self.board}"

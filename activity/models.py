"""What staff and programmers set for alerts and follows (SQL). The activity itself (rank history,
rank samples, notifications) is high-volume and lives in MongoDB (see `activity.mongo`)."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from solutions.models import Board, Programmer

MAX_ALERT_MINUTES = 24 * 60  # rank samples are kept a little longer than this


class AlertRule(models.Model):
    """A board's rank-drop alert: a drop of at least `places` within `minutes` (off by default)."""

    board = models.OneToOneField(Board, on_delete=models.CASCADE, related_name="alert_rule")
    enabled = models.BooleanField(default=False)
    places = models.PositiveSmallIntegerField(
        default=5,
        validators=[MinValueValidator(1)],
        help_text="Alert when a programmer drops at least this many places…",
    )
    minutes = models.PositiveSmallIntegerField(
        default=60,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_ALERT_MINUTES)],
        help_text=f"…within this many minutes (1 to {MAX_ALERT_MINUTES}).",
    )

    class Meta:
        ordering = ["board__position", "board__slug"]

    def __str__(self) -> str:
        return f"{self.board}: {self.describe()}"

    def describe(self) -> str:
        """The rule in words, as the settings page and the admin show it."""
        state = "" if self.enabled else " (off)"
        return f"a drop of {self.places}+ places within {self.minutes} minutes{state}"


class AlertPreferences(models.Model):
    """Which rank-drop alerts a user has opted in to (all off until they choose)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="alert_preferences"
    )
    my_rank_drops = models.BooleanField(
        default=False, verbose_name="Alert me when I drop on a board"
    )
    followed_rank_drops = models.BooleanField(
        default=False, verbose_name="Alert me when somebody I follow drops on a board"
    )
    share_rank_drops = models.BooleanField(
        default=False,
        verbose_name="Post my rank drops to the community chat",
        help_text="Staff choose the chats; your handle and ranks are posted there.",
    )

    class Meta:
        verbose_name_plural = "alert preferences"

    def __str__(self) -> str:
        return f"Alert preferences of {self.user}"


class Follow(models.Model):
    """A user following a programmer: their board view and, if they opt in, their alerts."""

    follower = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="follows"
    )
    followed = models.ForeignKey(Programmer, on_delete=models.CASCADE, related_name="followers")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["follower", "followed"], name="follow_once"),
        ]

    def __str__(self) -> str:
        return f"{self.follower} follows {self.followed}"

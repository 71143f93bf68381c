"""Webhooks in the admin: staff add and edit them; the delivery log is read-only."""

from django.contrib import admin
from django.db import models

from .models import Delivery, Webhook


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "active", "url", "created_at"]
    list_filter = ["kind", "active"]
    readonly_fields = ["secret", "created_at"]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    fieldsets = [
        (None, {"fields": ["name", "kind", "url", "active"]}),
        (
            "Events",
            {"fields": ["competition_started", "competition_ended", "board_leader", "rank_drop"]},
        ),
        (
            "Signature",
            {
                "fields": ["secret", "created_at"],
                "description": "Every delivery carries X-Leaderboard-Timestamp and "
                "X-Leaderboard-Signature: sha256= and the HMAC-SHA256 of "
                "“timestamp.body” keyed with this secret.",
            },
        ),
    ]


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    """What was sent where: written by the site only, so staff read it and never change it."""

    list_display = ["event_key", "hook", "status", "attempts", "created_at", "sent_at"]
    list_filter = ["status", "event", "hook"]
    search_fields = ["event_key"]
    readonly_fields = [
        "hook",
        "event",
        "event_key",
        "payload",
        "status",
        "attempts",
        "last_error",
        "created_at",
        "sent_at",
    ]
    exclude = ["claimed_until"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

"""Admin: each board's rank-drop alert rule, and (to help users) alert preferences and follows."""

from django.contrib import admin

from .models import AlertPreferences, AlertRule, Follow


@admin.register(AlertRule)
class AlertRuleAdmin(admin.ModelAdmin):
    list_display = ["board", "enabled", "places", "minutes"]
    list_editable = ["enabled", "places", "minutes"]
    list_filter = ["enabled"]
    fieldsets = [
        (
            None,
            {
                "fields": ["board", "enabled", "places", "minutes"],
                "description": (
                    "Programmers who opted in (and followers who opted in about the people they "
                    "follow) get a notification and an email when their rank on this board "
                    "drops by at least the places below within the minutes below. Ranks are "
                    "sampled every minute."
                ),
            },
        )
    ]


@admin.register(AlertPreferences)
class AlertPreferencesAdmin(admin.ModelAdmin):
    list_display = ["user", "my_rank_drops", "followed_rank_drops"]
    list_filter = ["my_rank_drops", "followed_rank_drops"]
    search_fields = ["user__username", "user__email"]
    raw_id_fields = ["user"]


@admin.register(Follow)
class FollowAdmin(admin.ModelAdmin):
    list_display = ["follower", "followed", "created_at"]
    search_fields = ["follower__username", "followed__handle"]
    raw_id_fields = ["follower", "followed"]

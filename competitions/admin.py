"""The admin for competitions: problems inline, registrations, "End now" and archiving."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from . import services
from .models import ENDED, RUNNING, UPCOMING, Competition, CompetitionProblem, Registration


class CompetitionProblemInline(admin.TabularInline):
    model = CompetitionProblem
    fields = ["position", "letter", "problem"]
    autocomplete_fields = ["problem"]
    extra = 3


class RegistrationInline(admin.TabularInline):
    model = Registration
    raw_id_fields = ["programmer"]
    readonly_fields = ["created_at"]
    extra = 0


class StatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request: HttpRequest, model_admin) -> list[tuple[str, str]]:
        return [(RUNNING, "Running"), (UPCOMING, "Upcoming"), (ENDED, "Ended")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Competition]):
        now = timezone.now()
        if self.value() == RUNNING:
            return queryset.filter(start__lte=now, end__gt=now)
        if self.value() == UPCOMING:
            return queryset.filter(start__gt=now)
        if self.value() == ENDED:
            return queryset.filter(end__lte=now)
        return queryset


@admin.register(Competition)
class CompetitionAdmin(admin.ModelAdmin):
    list_display = ["title", "slug", "start", "end", "freeze_at", "registration_required"]
    list_display += ["status", "final_archived_at"]
    list_filter = [StatusFilter, "registration_required", "start"]
    search_fields = ["title", "slug"]
    date_hierarchy = "start"
    inlines = [CompetitionProblemInline, RegistrationInline]
    actions = ["end_now", "archive"]

    @admin.display(description="Status")
    def status(self, competition: Competition) -> str:
        return competition.status(timezone.now())

    def get_readonly_fields(self, request: HttpRequest, obj: Competition | None = None):
        # Attempts are tagged with the slug, so it stays as created.
        return ["final_archived_at"] + (["slug"] if obj else [])

    def get_prepopulated_fields(self, request: HttpRequest, obj: Competition | None = None):
        return {} if obj else {"slug": ["title"]}

    @admin.action(description="End the selected competitions now")
    def end_now(self, request: HttpRequest, queryset: QuerySet[Competition]) -> None:
        ended = [c.slug for c in queryset if services.competition_end_now(competition=c)]
        if ended:
            self.message_user(request, f"Ended: {', '.join(ended)}.", messages.SUCCESS)
        if len(ended) < len(queryset):
            self.message_user(request, "Only running competitions can end now.", messages.WARNING)

    @admin.action(description="Archive the final standings of the selected ended competitions")
    def archive(self, request: HttpRequest, queryset: QuerySet[Competition]) -> None:
        archived = [c.slug for c in queryset if services.competition_archive(competition=c)]
        self.message_user(
            request,
            f"Archived: {', '.join(archived)}." if archived else "Nothing to archive.",
            messages.SUCCESS if archived else messages.WARNING,
        )

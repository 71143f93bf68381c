"""The admin site: problems, programmers and leaderboard definitions."""

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest

from . import mongo, services, tasks
from .models import Board, Problem, Programmer


@admin.register(Problem)
class ProblemAdmin(admin.ModelAdmin):
    list_display = ["slug", "title", "points", "answer_match", "scored", "published", "created_at"]
    list_filter = ["published", "scored", "answer_match"]
    search_fields = ["slug", "title"]
    prepopulated_fields = {"slug": ["title"]}


@admin.register(Programmer)
class ProgrammerAdmin(admin.ModelAdmin):
    list_display = ["handle", "user", "country", "organization", "hidden", "banned", "created_at"]
    list_filter = ["hidden", "banned", "country"]
    search_fields = ["handle", "organization", "user__username", "user__email"]
    raw_id_fields = ["user"]
    list_select_related = ["user"]
    # Hiding and banning move a programmer off (or back onto) every board and standings at once,
    # so they go through the actions (the service), never a bare edit of the flags.
    readonly_fields = ["hidden", "banned"]
    actions = ["hide", "unhide", "ban", "unban"]

    def save_model(self, request: HttpRequest, obj: Programmer, form, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if change and {"handle", "country", "organization"} & set(form.changed_data):
            # Board entries keep the handle and groups: recompute them from the solves log.
            services.programmer_refresh_boards(programmer=obj)

    @admin.action(description="Hide the selected programmers from public boards")
    def hide(self, request: HttpRequest, queryset: QuerySet[Programmer]) -> None:
        self._set_visibility(request, queryset, hidden=True)

    @admin.action(description="Show the selected programmers again (unhide)")
    def unhide(self, request: HttpRequest, queryset: QuerySet[Programmer]) -> None:
        self._set_visibility(request, queryset, hidden=False)

    @admin.action(description="Ban the selected programmers (off the boards, cannot submit)")
    def ban(self, request: HttpRequest, queryset: QuerySet[Programmer]) -> None:
        self._set_visibility(request, queryset, banned=True)

    @admin.action(description="Lift the ban on the selected programmers")
    def unban(self, request: HttpRequest, queryset: QuerySet[Programmer]) -> None:
        self._set_visibility(request, queryset, banned=False)

    def _set_visibility(self, request: HttpRequest, queryset, **flags: bool) -> None:
        for programmer in queryset:
            services.programmer_set_visibility(programmer=programmer, **flags)
        self.message_user(request, f"{len(queryset)} programmers updated.", messages.SUCCESS)


@admin.register(Board)
class BoardAdmin(admin.ModelAdmin):
    list_display = ["title", "slug", "window", "window_days", "metric", "ties", "visible"]
    list_display += ["is_default", "position"]
    list_filter = ["window", "metric", "ties", "visible"]
    search_fields = ["slug", "title"]
    prepopulated_fields = {"slug": ["title"]}
    raw_id_fields = ["problem"]
    actions = ["rebuild"]

    def save_model(self, request: HttpRequest, obj: Board, form, change: bool) -> None:
        super().save_model(request, obj, form, change)
        counting = {"window", "window_days", "metric", "problem", "lower_is_better", "score_limit"}
        if not change or counting & set(form.changed_data):
            # A new board, or one whose score now means something else, is filled from the
            # solves log in the background once this save is committed.
            mongo.ensure_indexes([obj.slug])
            transaction.on_commit(lambda: tasks.board_rebuild_task.delay(obj.pk))
            self.message_user(request, f"{obj.title} is being rebuilt from the solves log.")

    # Changing a board's window, metric or ties changes what counts: a rebuild recomputes the
    # board from the solves log.
    @admin.action(description="Rebuild the selected boards from the solves log")
    def rebuild(self, request: HttpRequest, queryset: QuerySet[Board]) -> None:
        mongo.ensure_indexes([board.slug for board in queryset])  # a board added in the admin
        for board in queryset:
            report = services.board_rebuild(board=board)
            self.message_user(
                request,
                f"{board.title} rebuilt: {report.entries} on the board, "
                f"{report.changed} changed, {report.removed} removed.",
                messages.SUCCESS,
            )


# Service tokens live beside the API.
from . import api_admin  # noqa: E402,F401

"""Pages of the activity app: notifications, alert settings, follow and unfollow."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from solutions import selectors as board_selectors
from solutions.models import Programmer

from . import selectors
from .forms import AlertPreferencesForm
from .services.follows import alert_preferences_save, follow_create, follow_delete
from .services.notifications import notifications_mark_read


@login_required
@require_http_methods(["GET"])
def notifications(request: HttpRequest) -> HttpResponse:
    """The newest notifications; showing them marks them read (the unread ones stay marked as
    new on this page)."""
    recent = selectors.notifications_recent(user=request.user)
    notifications_mark_read(user=request.user)
    return render(
        request,
        "activity/notifications.html",
        {"notifications": recent, "unread_notifications": 0},
    )


@login_required
@require_http_methods(["GET", "POST"])
def alert_settings(request: HttpRequest) -> HttpResponse:
    preferences = selectors.alert_preferences_of(user=request.user)
    form = AlertPreferencesForm(
        request.POST if request.method == "POST" else None, instance=preferences
    )
    if form.is_valid():
        alert_preferences_save(user=request.user, **form.cleaned_data)
        messages.success(request, "Your alert settings are saved.")
        return redirect("activity:alert_settings")
    context = {
        "form": form,
        "board_rules": selectors.board_rules(),
        "follows": selectors.follows_of(user=request.user),
        "has_email": bool(request.user.email),
    }
    return render(request, "activity/alert_settings.html", context)


@login_required
@require_POST
def follow(request: HttpRequest, handle: str) -> HttpResponse:
    programmer = _programmer_or_404(handle)
    try:
        follow_create(user=request.user, programmer=programmer)
    except ValidationError as error:
        messages.error(request, error.messages[0])
    else:
        messages.success(request, f"You follow {programmer.handle}.")
    return _back(request, programmer)


@login_required
@require_POST
def unfollow(request: HttpRequest, handle: str) -> HttpResponse:
    programmer = _programmer_or_404(handle)
    if follow_delete(user=request.user, programmer=programmer):
        messages.success(request, f"You no longer follow {programmer.handle}.")
    return _back(request, programmer)


def _programmer_or_404(handle: str) -> Programmer:
    programmer = board_selectors.programmer_by_handle(handle)
    if programmer is None:
        raise Http404("No programmer has that handle.")
    return programmer


def _back(request: HttpRequest, programmer: Programmer) -> HttpResponse:
    """Back where the button was (a safe `next`), else the programmer's profile."""
    target = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(target)
    return redirect("profile", handle=programmer.handle)

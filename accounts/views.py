"""The account page (email, password, country and organization, deleting the account) and
Django's password views in the site's look: a refused form is a 400, like every form of the
site, and a password reset is throttled."""

from __future__ import annotations

from axes.helpers import get_client_ip_address
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from solutions.models import Programmer
from solutions.views import programmer_of

from . import services
from .forms import DeleteForm, EmailForm, GroupsForm, PasswordChangeForm


@login_required
@require_safe
def account(request: HttpRequest) -> HttpResponse:
    return _account_page(request)


def _account_page(request: HttpRequest, status: int = 200, **bound: object) -> HttpResponse:
    """The account page, with the form that was refused (if any) bound to what was sent."""
    programmer = programmer_of(request)
    forms = {
        "email_form": EmailForm(request=request),
        "groups_form": GroupsForm(initial=_groups_of(programmer)) if programmer else None,
        "password_form": PasswordChangeForm(request.user, request=request),
        "delete_form": DeleteForm(request=request),
    }
    context = {"programmer": programmer, **forms, **bound}
    return render(request, "account/account.html", context, status=status)


def _groups_of(programmer: Programmer) -> dict[str, str]:
    return {"country": str(programmer.country), "organization": programmer.organization}


def _programmer_or_404(request: HttpRequest) -> Programmer:
    programmer = programmer_of(request)
    if programmer is None:
        raise Http404("Your account has no programmer handle.")
    return programmer


@login_required
@require_POST
def account_email(request: HttpRequest) -> HttpResponse:
    programmer = _programmer_or_404(request)
    form = EmailForm(request.POST, request=request)
    status = 400
    if form.is_valid():
        email = form.cleaned_data["email"]
        try:
            services.account_email_request(programmer=programmer, email=email)
        except services.Throttled as throttled:
            form.add_error("email", str(throttled))
            status = 429
        else:
            days = services.EMAIL_LINK_MAX_AGE.days
            messages.success(
                request, f"We sent a link to {email}: follow it within {days} days to confirm it."
            )
            return redirect("account")
    return _account_page(request, status=status, email_form=form)


@login_required
@require_POST
def account_email_remove(request: HttpRequest) -> HttpResponse:
    services.account_email_remove(user=request.user)
    messages.success(request, "Your email address is removed: no more emails go out to it.")
    return redirect("account")


@require_http_methods(["GET", "POST"])
def account_email_confirm(request: HttpRequest, token: str) -> HttpResponse:
    """A confirmation link. Opening it shows a button: mail scanners open links by themselves,
    and opening a page should not change anything."""
    try:
        if request.method == "POST":
            user = services.account_email_confirm(token=token)
            messages.success(request, f"{user.email} is confirmed: emails now go there.")
            return redirect("account" if request.user == user else "login")
        _user, email = services.email_link_read(token=token)
    except services.EmailLinkInvalid as invalid:
        return render(request, "account/email_confirm.html", {"error": str(invalid)}, status=400)
    return render(request, "account/email_confirm.html", {"email": email})


@login_required
@require_POST
def account_groups(request: HttpRequest) -> HttpResponse:
    programmer = _programmer_or_404(request)
    form = GroupsForm(request.POST)
    if not form.is_valid():
        return _account_page(request, status=400, groups_form=form)
    changed = services.programmer_groups_change(programmer=programmer, **form.cleaned_data)
    if changed:
        messages.success(request, "Saved: the boards' country and organization views show it.")
    return redirect("account")


@login_required
@require_POST
def account_delete(request: HttpRequest) -> HttpResponse:
    form = DeleteForm(request.POST, request=request)
    if not form.is_valid():
        return _account_page(request, status=400, delete_form=form)
    # Deleted first, signed out after: if the storage fails, the account is still there and
    # still signed in, to try again.
    services.account_delete(user=request.user)
    logout(request)
    messages.success(request, "Your account is deleted. Your solves stay on record, anonymously.")
    return redirect("leaderboard")


# --- Django's password views, in the site's look ---------------------------------------------


class RefusedFormIs400:
    """A refused form answers 400, like the site's own forms."""

    def form_invalid(self, form) -> HttpResponse:
        response = super().form_invalid(form)
        response.status_code = 400
        return response


class PasswordChangeView(RefusedFormIs400, auth_views.PasswordChangeView):
    form_class = PasswordChangeForm

    def get_form_kwargs(self) -> dict:
        return {**super().get_form_kwargs(), "request": self.request}


class PasswordResetConfirmView(RefusedFormIs400, auth_views.PasswordResetConfirmView):
    pass


class PasswordResetView(RefusedFormIs400, auth_views.PasswordResetView):
    """Mails a reset link to the accounts with that confirmed address, at most a few times an
    hour per email address and per client address (the one logins are throttled by)."""

    def form_valid(self, form) -> HttpResponse:
        try:
            services.password_reset_throttle(
                client=get_client_ip_address(self.request) or "",
                email=form.cleaned_data["email"],
            )
        except services.Throttled as throttled:
            minutes = -(-throttled.retry_after // 60)  # rounded up
            response = render(
                self.request,
                "registration/password_reset_throttled.html",
                {"minutes": minutes},
                status=429,
            )
            response["Retry-After"] = str(throttled.retry_after)
            return response
        # The link names the site as SITE_URL does, like the alert emails, not the request's host.
        self.extra_email_context = {"site_url": settings.SITE_URL.rstrip("/")}
        return super().form_valid(form)

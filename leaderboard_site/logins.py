"""Login throttling with django-axes, for every way in: the login page, the admin's and
POST /api/v1/auth/token all call `authenticate(request, ...)`, so axes counts their failures
together, in the database (shared by every process).

Failures are counted per (username, client address): an attacker who guesses one account's
password is locked out of that account from that address, while its owner, elsewhere, and the
attacker's other targets are not. The client address is the one the trusted proxy saw (see
`client_ip`), so one attacker behind the proxy cannot lock everybody out, nor dodge the count.

A login name is matched without regard to case, as handles are unique (`login_name`): the
password is checked against the account it names, and the failures are counted against that
account's own username, so ``ALICE``, ``alice`` and ``Alice`` share one count.
"""

from __future__ import annotations

import ipaddress

from axes.backends import AxesStandaloneBackend
from axes.handlers.proxy import AxesProxyHandler
from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from solutions import selectors
from solutions.api.errors import error_response


def login_name(typed: str) -> str:
    """The username of the account a login names in any case (`selectors.user_logging_in_as`);
    for a name that is nobody's, the name in lower case (so its case variants count as one)."""
    user = selectors.user_logging_in_as(typed)
    return user.get_username() if user is not None else typed.lower()


def lockout_username(request: HttpRequest, credentials: dict | None) -> str | None:
    """What django-axes counts failures against (AXES_USERNAME_CALLABLE): the login name as
    `login_name` resolves it, whatever case was typed."""
    typed = (credentials or {}).get("username") or request.POST.get("username")
    return login_name(typed) if isinstance(typed, str) else None


def client_ip(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or behind a proxy the address it put in
    TRUSTED_PROXY_HEADER: exactly the entry the proxy wrote, never one the client sent.

    The README's nginx replaces X-Forwarded-For with the address it saw (`$remote_addr`), so
    the header holds that one entry. A proxy that appends instead writes its entry last, behind
    whatever the client sent; with TRUSTED_PROXY_COUNT proxies in a row, the first of them
    wrote the entry that many from the end, and anything left of it may be forged. (django-
    ipware's proxy count counts the proxies named *inside* the header, which is not how a proxy
    in front of the site fills it: so this is spelt out here.)
    """
    remote = request.META.get("REMOTE_ADDR", "")
    header = settings.TRUSTED_PROXY_HEADER
    if not header:
        return remote
    hops = [hop.strip() for hop in request.headers.get(header, "").split(",")]
    if len(hops) < settings.TRUSTED_PROXY_COUNT:
        return remote
    candidate = hops[-settings.TRUSTED_PROXY_COUNT]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None, credentials: dict | None
) -> HttpResponse:
    """What a locked-out login gets: the API's error shape under /api/, a page elsewhere."""
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    retry_after = {"Retry-After": str(int(settings.AXES_COOLOFF_TIME.total_seconds()))}
    if request.path.startswith("/api/"):
        return error_response(
            429, "too_many_attempts", "Too many failed logins: try again later.", retry_after
        )
    # Rendered without the request: no context processor runs, nothing is read for the refusal.
    page = render_to_string("registration/locked_out.html", {"minutes": minutes})
    response = HttpResponse(page, status=429)
    response["Retry-After"] = retry_after["Retry-After"]
    return response


def login_page(request: HttpRequest) -> HttpResponse:
    """Django's login page, with the lockout checked first: a locked-out login is refused
    before its form is checked or the page rendered (axes alone would check the form, count the
    refusal, render the login page and throw it away for the lockout page: 19-29 ms of CPU for
    each guess of a password guesser). Axes still checks every login that gets through."""
    typed = request.POST.get("username") if request.method == "POST" else None
    if isinstance(typed, str) and typed:
        if not AxesProxyHandler.is_allowed(request, {"username": typed}):
            return lockout_response(request, None, None)
    return LoginView.as_view()(request)


class LoginBackend(AxesStandaloneBackend, ModelBackend):
    """Django's password check behind axes' lockout check, as one backend: with a single
    backend, views may call `login(request, user)` without naming one.

    A call without a request (a shell or a management command, not a login over HTTP) has no
    client to count and goes straight to the password check."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs,
    ):
        if isinstance(username, str):
            username = login_name(username)
        if request is not None:
            # Raises PermissionDenied when locked out; authenticate() counts it as a failure.
            AxesStandaloneBackend.authenticate(self, request, username, password, **kwargs)
        return ModelBackend.authenticate(self, request, username, password, **kwargs)

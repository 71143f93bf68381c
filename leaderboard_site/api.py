"""The JSON API under /api/v1/: one django-ninja API with each app's router, its OpenAPI document
generated from the code at /api/v1/openapi.json (browsable at /api/v1/docs in ninja's own copy of
Swagger UI, served like the site's other static files), and every answer that is not a success
in the error shape `{"error": {"code", "message"}}` — 404 for unknown paths and 405 for other
methods included (ninja itself answers those two in plain text).

It lives here, beside the page URLs, because it names every app: `solutions` never imports
`competitions` or `activity`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.urls import URLPattern, re_path
from django.views.decorators.http import require_safe
from ninja import NinjaAPI

from competitions.api import router as competitions_router
from solutions.api.errors import install_handlers, method_not_allowed, not_found
from solutions.api.parser import JsonParser
from solutions.api.views import router as solutions_router

api = NinjaAPI(
    title="Leaderboard API",
    version="1.0.0",
    description=(
        "Judges and game servers post accepted solves, or every verdict for competitions, with "
        "a service token; apps read boards, standings and competition standings. Every error is "
        '{"error": {"code", "message"}} with a 4xx status. Dates are days in the leaderboard '
        "time zone; `date` defaults to today, and a past date shows that day's final board. "
        "Ranks are shared (1, 2, 2, 4) unless a board says `unique`; inside a tie whoever "
        "reached the score earlier is listed first, then by handle."
    ),
    urls_namespace="api",
    openapi_url="/openapi.json",
    # Swagger UI from ninja's static files ("ninja" is an installed app; otherwise ninja's page
    # loads it from a CDN, which the CSP forbids). Its page has no inline script to allow.
    docs_url="/docs",
    parser=JsonParser(),
)
install_handlers(api)
api.add_router("", solutions_router)
api.add_router("", competitions_router)


def in_error_shape(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A view of the API whose 404 and 405 keep the error shape."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        try:
            response = view(request, *args, **kwargs)
        except Http404:
            return not_found(request)
        if isinstance(response, HttpResponseNotAllowed):
            return method_not_allowed([name.strip() for name in response["Allow"].split(",")])
        return response

    wrapper.csrf_exempt = True  # type: ignore[attr-defined]  # tokens, never cookies, authorize
    return wrapper


def _api_pattern(pattern: URLPattern) -> URLPattern:
    view = pattern.callback
    if pattern.name in ("openapi-json", "openapi-view"):
        view = require_safe(view)  # ninja's document and docs views would answer any method
    return URLPattern(pattern.pattern, in_error_shape(view), pattern.default_args, pattern.name)


def urls() -> tuple[list, str, str]:
    """The API's URL patterns for `path("api/v1/", ...)`; the last answers any other path."""
    patterns, app_name, namespace = api.urls
    return (
        [_api_pattern(pattern) for pattern in patterns]
        + [re_path(r"", not_found, name="not-found")],
        app_name,
        namespace,
    )

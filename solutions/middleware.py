"""Middleware of the site: a response for one visitor is never kept by a shared cache, and a
storage fault on a page answers a friendly 503 at once (the API has its own JSON answer)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import has_vary_header, patch_cache_control, patch_vary_headers

from . import mongo

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
# A page's refusal or fault says which it is as the API's error code does in its body
# (`solves_busy`, `rate_limited`, `storage_unavailable`), for a script or a load generator that
# must tell a busy site shedding work from one that is down.
ERROR_CODE_HEADER = "X-Error-Code"


class PrivateWhenPersonalMiddleware:
    """A response made for whoever sent the request is `Cache-Control: private`: a proxy or CDN
    in front of the site must not keep it and hand it to the next visitor.

    Such a response either used the session (Django's session and CSRF middleware then add
    `Vary: Cookie`: the account page, notifications, submissions, any page that shows who is
    signed in) or answered a request with credentials in its `Authorization` header (an API
    read with an access token, which also gets `Vary: Authorization`). The rest, a static file
    or the API's anonymous reads, stays as its view made it. Only `private` is added: the
    live pages' ETags and 304s (`etags`) work as before. Listed above the session and CSRF
    middleware, so it sees the `Vary` they add."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if "Authorization" in request.headers:
            patch_vary_headers(response, ["Authorization"])
        if has_vary_header(response, "Cookie") or "Authorization" in request.headers:
            patch_cache_control(response, private=True)
        return response


class StorageUnavailableMiddleware:
    """Turns a storage fault that passes (`mongo.is_transient`: MongoDB out of reach, a primary
    stepping down, a write a majority did not confirm in time) into a "back in a moment" page
    with Retry-After."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, error: Exception) -> HttpResponse | None:
        if not mongo.is_transient(error):
            return None
        logger.warning("Storage unavailable on %s %s: %r", request.method, request.path, error)
        response = render(request, "503.html", status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        response[ERROR_CODE_HEADER] = "storage_unavailable"
        return response

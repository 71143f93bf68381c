"""A storage fault on a page answers a friendly 503 at once (the API has its own JSON answer)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from . import mongo

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5


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
        return response

"""Reading request bodies: JSON of at most 64 KiB, UTF-8, without NaN or Infinity (which
Python's json module takes by default) and not nested past the interpreter's limit."""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest
from ninja.parser import Parser

from .errors import ApiError

MAX_BODY_BYTES = 64 * 1024


def refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def body_bytes(request: HttpRequest) -> bytes:
    """The raw body, or 413 when it is (or says it is) over MAX_BODY_BYTES."""
    too_big = ApiError(413, "body_too_large", f"The body may be {MAX_BODY_BYTES} bytes at most.")
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > MAX_BODY_BYTES:
        raise too_big
    try:
        raw = request.body
    except RequestDataTooBig as error:
        raise too_big from error
    if len(raw) > MAX_BODY_BYTES:
        raise too_big
    return raw


def json_body(request: HttpRequest) -> Any:
    """The request body as JSON: 413 when too big, 400 `malformed_json` when it is not JSON."""
    raw = body_bytes(request)
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=refuse_constant)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise ApiError(400, "malformed_json", "The body is not valid JSON.") from error


class JsonParser(Parser):
    """django-ninja's body parser with the limits above (ninja turns its errors into an
    HttpError whose cause is our ApiError; the API's handler answers with that)."""

    def parse_body(self, request: HttpRequest) -> Any:
        return json_body(request)

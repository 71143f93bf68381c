"""The API's one error shape, ``{"error": {"code", "message"}}`` with a 4xx, and the exception
handlers that give it to every failure django-ninja or a view can raise.

`code` is stable, for programs (the OpenAPI document lists every one); `message` is for people.
"""

from __future__ import annotations

import logging
import re
from typing import Literal, get_args

from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from ninja import NinjaAPI
from ninja.errors import HttpError
from ninja.errors import ValidationError as NinjaValidationError
from pymongo.errors import PyMongoError

from .. import mongo
from ..middleware import RETRY_AFTER_SECONDS
from ..solve_slots import SolvesBusy

logger = logging.getLogger(__name__)

ErrorCode = Literal[
    "malformed_json",
    "malformed_body",
    "invalid_body",
    "invalid_parameter",
    "bad_date",
    "unauthorized",
    "invalid_credentials",
    "cross_site_request",
    "unsupported_media_type",
    "unknown_board",
    "unknown_programmer",
    "no_programmer",
    "unknown_competition",
    "unknown_problem",
    "page_out_of_range",
    "not_found",
    "method_not_allowed",
    "id_reused",
    "request_in_progress",
    "body_too_large",
    "solve_rejected",
    "submission_rejected",
    "handle_looks_taken",
    "too_many_attempts",
    "rate_limited",
    "storage_unavailable",
    "solves_busy",
    "internal_error",
]
ERROR_CODES: frozenset[str] = frozenset(get_args(ErrorCode))
MESSAGE_MAX_LENGTH = 300
# Control characters and lone surrogates: never echoed back in a message.
UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


class ApiError(Exception):
    """An answer in the error shape: raise it anywhere below a view."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        assert code in ERROR_CODES, code
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.headers = headers or {}


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JsonResponse:
    assert code in ERROR_CODES, code  # the document lists them all: add a new one to ErrorCode
    message = UNPRINTABLE.sub("?", message)[:MESSAGE_MAX_LENGTH]
    response = JsonResponse({"error": {"code": code, "message": message}}, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def rate_limited(retry_after: int, allowed: int) -> ApiError:
    return ApiError(
        429,
        "rate_limited",
        f"This token may write {allowed} times a second: send it again in {retry_after} s "
        "(Retry-After), with the same id.",
        {"Retry-After": str(retry_after)},
    )


def unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, {"WWW-Authenticate": 'Bearer realm="api"'})


def not_found(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    """Any other path under /api/v1/, whatever the method: 404 in the API's shape."""
    return error_response(
        404, "not_found", "There is no such API endpoint: see /api/v1/openapi.json."
    )


not_found.csrf_exempt = True  # type: ignore[attr-defined]


def method_not_allowed(allowed: list[str]) -> HttpResponse:
    allowed = sorted(allowed)
    return error_response(
        405,
        "method_not_allowed",
        f"Use {' or '.join(allowed)} here.",
        {"Allow": ", ".join(allowed)},
    )


def validation_error_code(source: str, field: str) -> str:
    if source == "query":
        return "bad_date" if field == "date" else "invalid_parameter"
    return "invalid_body" if source == "body" else "invalid_parameter"


def validation_message(error: dict) -> tuple[str, str]:
    """(field, message) of one pydantic error as ninja reports it: `loc` starts with where the
    value came from (body, query) and, for a body, the name of the view's body parameter."""
    source, *where = error["loc"]
    if source == "body":
        where = where[1:]
    field = ".".join(str(part) for part in where)
    message = str(error["msg"]).removeprefix("Value error, ")
    return field, f"{field}: {message}" if field else message


def install_handlers(api: NinjaAPI) -> None:
    """Every failure in the error shape: ninja's own (validation, auth, unparsable bodies),
    Django's (404, bodies too big or unreadable), storage outages, and anything unexpected."""
    _install_ninja_handlers(api)
    _install_django_handlers(api)
    _install_server_handlers(api)


def _install_ninja_handlers(api: NinjaAPI) -> None:
    """Our ApiError and what ninja raises: invalid input, failed auth, unparsable bodies."""

    @api.exception_handler(ApiError)
    def api_error(request: HttpRequest, error: ApiError) -> HttpResponse:
        return error_response(error.status, error.code, error.message, error.headers)

    @api.exception_handler(NinjaValidationError)
    def invalid(request: HttpRequest, error: NinjaValidationError) -> HttpResponse:
        first = error.errors[0]
        field, message = validation_message(first)
        return error_response(400, validation_error_code(first["loc"][0], field), message)

    @api.exception_handler(HttpError)
    def http_error(request: HttpRequest, error: HttpError) -> HttpResponse:
        # The body parser raises ApiError; ninja wraps it in an HttpError(400).
        if isinstance(error.__cause__, ApiError):
            return api_error(request, error.__cause__)
        if error.status_code == 401:
            return api_error(request, unauthorized("Send a valid bearer token."))
        code = {429: "too_many_attempts", 404: "not_found"}.get(error.status_code, "invalid_body")
        return error_response(error.status_code, code, str(error))


def _install_django_handlers(api: NinjaAPI) -> None:
    @api.exception_handler(Http404)
    def missing(request: HttpRequest, error: Http404) -> HttpResponse:
        return not_found(request)

    @api.exception_handler(RequestDataTooBig)
    def too_big(request: HttpRequest, error: RequestDataTooBig) -> HttpResponse:
        return error_response(413, "body_too_large", "The body is too large.")

    @api.exception_handler(SuspiciousOperation)
    @api.exception_handler(MultiPartParserError)
    def unreadable(request: HttpRequest, error: Exception) -> HttpResponse:
        return error_response(400, "malformed_body", "The body could not be read.")


def _install_server_handlers(api: NinjaAPI) -> None:
    """Storage faults that pass (503, retry soon: `mongo.is_transient`), a solve past this
    process's bound (503, retry soon: `solve_slots`) and anything unexpected (500)."""

    @api.exception_handler(PyMongoError)
    def storage_fault(request: HttpRequest, error: PyMongoError) -> HttpResponse:
        if not mongo.is_transient(error):
            return unexpected(request, error)
        logger.warning("Storage unavailable on %s %s: %r", request.method, request.path, error)
        return error_response(
            503,
            "storage_unavailable",
            "The storage is unavailable: retry in a few seconds.",
            {"Retry-After": str(RETRY_AFTER_SECONDS)},
        )

    @api.exception_handler(SolvesBusy)
    def busy(request: HttpRequest, error: SolvesBusy) -> HttpResponse:
        return error_response(
            503,
            "solves_busy",
            f"Too many solves are being recorded just now: nothing was recorded; send it again "
            f"in {error.retry_after} s (Retry-After), with the same id.",
            {"Retry-After": str(error.retry_after)},
        )

    @api.exception_handler(Exception)
    def unexpected(request: HttpRequest, error: Exception) -> HttpResponse:
        # Logged with the traceback; the client still gets JSON, never an HTML error page.
        logger.exception("API error on %s %s", request.method, request.path, exc_info=error)
        return error_response(500, "internal_error", "Something went wrong on our side.")

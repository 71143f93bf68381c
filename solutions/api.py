"""The JSON API under /api/v1/: judges post solves with a service token, apps read boards and
standings, and a programmer's app reads its holder's standing with a short-lived access token.

The contract is in DESIGN.md and described for machines in `openapi.json` (served beside it),
whose request schema also validates the solve body. Every error, 404 and 405 included, is
``{"error": {"code", "message"}}`` with a 4xx: `api_view` turns `ApiError` into that shape, and
the last route of `api_urls` answers unknown paths.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django import forms
from django.contrib.auth import authenticate
from django.core.cache import cache
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation, ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.views.decorators.csrf import csrf_exempt
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from . import idempotency, leaderboard, selectors, services, tokens
from .models import Board, Programmer
from .rules import HANDLE_PATTERN

logger = logging.getLogger(__name__)

OPENAPI_PATH = Path(__file__).with_name("openapi.json")
MAX_BODY_BYTES = 64 * 1024
MAX_PAGE = 100_000
MAX_PAGE_SIZE = 100
MAX_AROUND = 20
SLUG_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
# Failed logins allowed per (address, username) before /auth/token answers 429 for a while.
LOGIN_FAILURES_ALLOWED = 10
LOGIN_LOCKOUT_SECONDS = 15 * 60

View = Callable[..., HttpResponse]


class ApiError(Exception):
    """An answer in the error shape: raise it anywhere below a view."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.headers = headers or {}


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JsonResponse:
    response = JsonResponse({"error": {"code": code, "message": message}}, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def api_view(*methods: str) -> Callable[[View], View]:
    """CSRF-exempt (no API call acts on a cookie), method-checked, and errors in the API's shape.

    Unexpected exceptions are logged and answered 500 in the same shape, so a client never has
    to parse an HTML error page.
    """
    allowed = {*methods, "HEAD"} if "GET" in methods else set(methods)

    def decorator(view: View) -> View:
        @csrf_exempt
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.method not in allowed:
                return error_response(
                    405,
                    "method_not_allowed",
                    f"Use {' or '.join(sorted(allowed))} here.",
                    {"Allow": ", ".join(sorted(allowed))},
                )
            try:
                return view(request, *args, **kwargs)
            except ApiError as error:
                return error_response(error.status, error.code, error.message, error.headers)
            except RequestDataTooBig:
                return error_response(413, "body_too_large", "The body is too large.")
            except (SuspiciousOperation, MultiPartParserError):
                return error_response(400, "malformed_body", "The body could not be read.")
            except Exception:
                logger.exception("API error on %s %s", request.method, request.path)
                return error_response(500, "internal_error", "Something went wrong on our side.")

        return wrapper

    return decorator


def bearer_token(request: HttpRequest) -> str:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def service_token_required(view: View) -> View:
    """Only a service token in the Authorization header may post: a session cookie is ignored."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        service_token = tokens.service_token_authenticate(token=bearer_token(request))
        if service_token is None:
            raise ApiError(
                401,
                "unauthorized",
                "Send a service token: Authorization: Bearer <token>.",
                {"WWW-Authenticate": 'Bearer realm="api"'},
            )
        request.service_token = service_token
        return view(request, *args, **kwargs)

    return wrapper


def access_token_required(view: View) -> View:
    """The holder of an unexpired access token from /api/v1/auth/token, as `request.api_user`."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        user = tokens.access_token_user(token=bearer_token(request))
        if user is None:
            raise ApiError(
                401,
                "unauthorized",
                "Send an unexpired access token from POST /api/v1/auth/token.",
                {"WWW-Authenticate": 'Bearer realm="api"'},
            )
        request.api_user = user
        return view(request, *args, **kwargs)

    return wrapper


def idempotent_response(
    *,
    key: str,
    body_hash: str,
    work: Callable[[], idempotency.Answer],
    rejected_code: str,
    time_field: str = "solved_at",
) -> JsonResponse:
    """Run `work` once per idempotency key and answer with its first answer, turning refusals
    into the API's errors (422 for a time the boards cannot take, 409 for a reused key)."""
    try:
        answer = idempotency.request_answer(key=key, body_hash=body_hash, work=work)
    except services.SolveRejected as error:
        message = str(error).replace("solved_at", time_field)
        raise ApiError(422, rejected_code, message) from error
    except idempotency.KeyReused as error:
        raise ApiError(409, "id_reused", "This id was used before with another body.") from error
    except idempotency.KeyInFlight as error:
        raise ApiError(
            409,
            "request_in_progress",
            "The first request with this id is still running: retry in a moment.",
            {"Retry-After": "1"},
        ) from error
    response = JsonResponse(answer.body, status=answer.status)
    if answer.replayed:
        response["Idempotent-Replayed"] = "true"
    return response


# --- reading requests ------------------------------------------------------------------------


@functools.cache
def openapi_document() -> dict:
    return json.loads(OPENAPI_PATH.read_text())


@functools.cache
def request_validator(schema: str) -> Draft202012Validator:
    """A request schema of the OpenAPI document: one description for clients and for us."""
    return Draft202012Validator(openapi_document()["components"]["schemas"][schema])


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def json_body(request: HttpRequest) -> Any:
    """The request body as JSON: 413 when too big, 400 when malformed, deeply nested, or holding
    NaN or Infinity (which Python's json module accepts by default)."""
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    too_big = ApiError(413, "body_too_large", f"The body may be {MAX_BODY_BYTES} bytes at most.")
    if declared > MAX_BODY_BYTES:
        raise too_big
    try:
        raw = request.body
    except RequestDataTooBig as error:
        raise too_big from error
    if len(raw) > MAX_BODY_BYTES:
        raise too_big
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        raise ApiError(400, "malformed_json", "The body is not valid JSON.") from error


def judge_body_moment(body: Any, *, schema: str, time_field: str) -> dt.datetime:
    """Check a judge's report against its request schema, or 400, and return its moment in UTC.

    The schema does most of it; Python's `re` lets `$` match before a final newline, so handles
    and slugs are also matched whole here, and the moment must carry an offset."""
    try:
        error = best_match(request_validator(schema).iter_errors(body))
    except RecursionError as recursion:
        raise ApiError(400, "invalid_body", "The body is nested too deeply.") from recursion
    if error is not None:
        where = ".".join(str(part) for part in error.absolute_path) or "body"
        raise ApiError(400, "invalid_body", f"{where}: {error.message}"[:300])
    if not re.fullmatch(HANDLE_PATTERN, body["programmer"]):
        raise ApiError(400, "invalid_body", "programmer: not a valid handle.")
    if not re.fullmatch(SLUG_PATTERN, body["problem"]):
        raise ApiError(400, "invalid_body", "problem: not a valid problem slug.")
    try:
        moment = dt.datetime.fromisoformat(body[time_field])
    except ValueError as error:
        message = f"{time_field}: not an ISO 8601 date and time."
        raise ApiError(400, "invalid_body", message) from error
    if moment.tzinfo is None:
        raise ApiError(400, "invalid_body", f"{time_field}: give a UTC offset, e.g. +06:00 or Z.")
    try:
        # In UTC from here on; a moment like 0001-01-01T00:00+01:00 has no UTC date at all.
        return moment.astimezone(dt.UTC)
    except OverflowError as error:
        raise ApiError(400, "invalid_body", f"{time_field}: out of range.") from error


@dataclass(frozen=True)
class SolveInput:
    id: str
    programmer: str
    problem: str
    solved_at: dt.datetime
    points: int | None
    body_hash: str


def solve_input(body: Any) -> SolveInput:
    """A validated solve, or 400."""
    solved_at = judge_body_moment(body, schema="SolveRequest", time_field="solved_at")
    points = body.get("points")
    return SolveInput(
        id=body["id"],
        programmer=body["programmer"],
        problem=body["problem"],
        solved_at=solved_at,
        points=None if points is None else int(points),  # JSON Schema takes 5.0 as an integer
        body_hash=idempotency.fingerprint(body),
    )


class BoardQuery(forms.Form):
    """Query parameters of the board endpoints. `country` and `org` show a group's view."""

    date = forms.DateField(required=False, input_formats=["%Y-%m-%d"])
    page = forms.IntegerField(required=False, min_value=1, max_value=MAX_PAGE)
    page_size = forms.IntegerField(required=False, min_value=1, max_value=MAX_PAGE_SIZE)
    around = forms.IntegerField(required=False, min_value=0, max_value=MAX_AROUND)
    country = forms.RegexField(required=False, regex=r"\A[A-Za-z]{2}\Z")
    org = forms.CharField(required=False, max_length=100, strip=False)

    def clean(self) -> dict:
        data = super().clean()
        # A form would read `?page=` as "no page"; an API client that sends it has a bug.
        for name in self.fields:
            if self.data.get(name) == "":
                self.add_error(name, "May not be empty: leave the parameter out instead.")
        if data.get("country") and data.get("org"):
            raise ValidationError("Filter by country or by org, not both.")
        return data

    @property
    def scope(self) -> str:
        if self.cleaned_data.get("country"):
            return f"country:{self.cleaned_data['country'].upper()}"
        if self.cleaned_data.get("org"):
            return f"org:{self.cleaned_data['org']}"
        return ""


def board_query(request: HttpRequest, board: Board) -> tuple[BoardQuery, int]:
    """The validated query and the board day it asks for (today by default), or 400."""
    query = BoardQuery(request.GET)
    if not query.is_valid():
        field, errors = next(iter(query.errors.items()))
        where = "" if field == "__all__" else f"{field}: "
        code = "bad_date" if field == "date" else "invalid_parameter"
        raise ApiError(400, code, f"{where}{errors[0]}")
    date = query.cleaned_data["date"]
    day = services.today() if date is None else leaderboard.date_to_day(date)
    if not selectors.day_is_browsable(board, day):
        raise ApiError(400, "bad_date", "That day's board is not kept (too old or too far ahead).")
    return query, day


def board_or_404(slug: str) -> Board:
    board = selectors.boards_visible().filter(slug=slug).first()
    if board is None:
        raise ApiError(404, "unknown_board", f"There is no board {slug!r}.")
    return board


def programmer_or_404(handle: str) -> Programmer:
    programmer = None
    if re.fullmatch(HANDLE_PATTERN, handle):
        programmer = selectors.programmer_by_handle(handle)
    if programmer is None:
        raise ApiError(404, "unknown_programmer", f"There is no programmer {handle[:32]!r}.")
    return programmer


# --- shaping answers -------------------------------------------------------------------------


def row_json(row: selectors.Row) -> dict:
    return {"rank": row.rank, "handle": row.handle, "score": row.score}


def board_json(board: Board) -> dict:
    return {
        "slug": board.slug,
        "title": board.title,
        "window": board.window,
        "window_days": board.window_days if board.is_rolling else None,
        "metric": board.metric,
        "ties": board.ties,
    }


def standing_json(
    *, board: Board, programmer: Programmer, day: int, around: int, scope: str
) -> dict:
    """A programmer's standing with their neighbours and forecast (the same selectors as the
    board and profile pages, so every rank agrees)."""
    standing = selectors.programmer_standing(
        board=board, programmer=programmer, day=day, scope=scope
    )
    above, below = selectors.programmer_neighbours(
        board=board, standing=standing, around=around, scope=scope
    )
    forecast = (
        selectors.programmer_forecast(board=board, programmer=programmer)
        if programmer.on_boards
        else []
    )
    return {
        "board": board.slug,
        "date": leaderboard.day_to_date(standing.day).isoformat(),
        "handle": programmer.handle,
        "rank": standing.rank,
        "score": standing.score,
        "total": standing.total,
        "percentile": standing.percentile,
        "above": [row_json(row) for row in above],
        "below": [row_json(row) for row in below],
        "forecast": [{"date": date.isoformat(), "score": score} for date, score in forecast],
    }


# --- views -----------------------------------------------------------------------------------


@api_view("GET")
def openapi(request: HttpRequest) -> HttpResponse:
    return JsonResponse(openapi_document())


@api_view("POST")
@service_token_required
def solves(request: HttpRequest) -> HttpResponse:
    """A judge reports an accepted solve; the same id always gets the first answer."""
    solve = solve_input(json_body(request))

    def record() -> idempotency.Answer:
        counted = services.solve_report(
            handle=solve.programmer,
            problem_slug=solve.problem,
            solved_at=solve.solved_at,
            points=solve.points,
        )
        return idempotency.Answer(status=201, body={"id": solve.id, "counted": counted})

    return idempotent_response(
        key=f"{request.service_token.pk}:{solve.id}",
        body_hash=solve.body_hash,
        work=record,
        rejected_code="solve_rejected",
    )


@api_view("GET")
def boards(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"boards": [board_json(board) for board in selectors.boards_visible()]})


@api_view("GET")
def board_detail(request: HttpRequest, slug: str) -> HttpResponse:
    board = board_or_404(slug)
    query, day = board_query(request, board)
    page = selectors.board_page(
        board=board,
        day=day,
        page=query.cleaned_data["page"] or 1,
        page_size=query.cleaned_data["page_size"] or selectors.PAGE_SIZE,
        scope=query.scope,
    )
    return JsonResponse(
        {
            "board": board.slug,
            "date": page.date.isoformat(),
            "total": page.total,
            "page": page.page,
            "page_size": page.page_size,
            "pages": page.pages,
            "entries": [row_json(row) for row in page.rows],
        }
    )


def _around(query: BoardQuery) -> int:
    around = query.cleaned_data["around"]
    return 4 if around is None else around


@api_view("GET")
def programmer_detail(request: HttpRequest, slug: str, handle: str) -> HttpResponse:
    board = board_or_404(slug)
    programmer = programmer_or_404(handle)
    query, day = board_query(request, board)
    return JsonResponse(
        standing_json(
            board=board, programmer=programmer, day=day, around=_around(query), scope=query.scope
        )
    )


@api_view("GET")
@access_token_required
def me(request: HttpRequest) -> HttpResponse:
    """The access token holder's own standing (default board unless `board` says otherwise)."""
    slug = request.GET.get("board")
    board = selectors.board_default() if slug is None else board_or_404(slug)
    if board is None:
        raise ApiError(404, "unknown_board", "There are no boards yet.")
    programmer = Programmer.objects.filter(user=request.api_user).first()
    if programmer is None:
        raise ApiError(404, "no_programmer", "This account has no programmer profile yet.")
    query, day = board_query(request, board)
    return JsonResponse(
        standing_json(
            board=board, programmer=programmer, day=day, around=_around(query), scope=query.scope
        )
    )


def _credentials(request: HttpRequest) -> tuple[str, str]:
    """Username and password from a JSON or a form body."""
    if request.content_type == "application/json":
        body = json_body(request)
        body = body if isinstance(body, dict) else {}
    else:
        body = request.POST
    username, password = body.get("username"), body.get("password")
    if not isinstance(username, str) or not isinstance(password, str) or not username:
        raise ApiError(400, "invalid_body", "Send a username and a password.")
    if len(username) > 150 or len(password) > 4096:
        raise ApiError(400, "invalid_body", "The username or password is too long.")
    return username, password


def _login_failures_key(request: HttpRequest, username: str) -> str:
    # Hashed: a cache key must stay short and printable whatever the username holds.
    who = f"{request.META.get('REMOTE_ADDR', '')}\n{username.casefold()}"
    return "api-login-failures:" + hashlib.sha256(who.encode()).hexdigest()


def login_failure_count(key: str) -> None:
    if not cache.add(key, 1, LOGIN_LOCKOUT_SECONDS):
        try:
            cache.incr(key)
        except ValueError:  # expired between the two calls
            cache.set(key, 1, LOGIN_LOCKOUT_SECONDS)


@api_view("POST")
def auth_token(request: HttpRequest) -> HttpResponse:
    """Username and password in, a one-hour access token out. Failed attempts are counted per
    address and username; too many lock that pair out for a while."""
    username, password = _credentials(request)
    failures_key = _login_failures_key(request, username)
    if cache.get(failures_key, 0) >= LOGIN_FAILURES_ALLOWED:
        raise ApiError(
            429,
            "too_many_attempts",
            "Too many failed logins: try again later.",
            {"Retry-After": str(LOGIN_LOCKOUT_SECONDS)},
        )
    user = authenticate(request, username=username, password=password)
    if user is None:
        login_failure_count(failures_key)
        raise ApiError(401, "invalid_credentials", "Wrong username or password.")
    cache.delete(failures_key)
    token = tokens.access_token_issue(user=user)
    return JsonResponse({"token": token.token, "expires_at": token.expires_at.isoformat()})


@csrf_exempt
def not_found(request: HttpRequest) -> HttpResponse:
    """Any other path under /api/v1/, whatever the method: 404 in the API's shape."""
    return error_response(
        404, "not_found", "There is no such API endpoint: see /api/v1/openapi.json."
    )

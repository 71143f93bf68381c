"""The solutions part of the JSON API: judges post solves with a service token, apps read boards
and standings, and a programmer's app reads its holder's standing with an access token.

Each view validates through its schemas, calls services and selectors (the same ones as the
pages, so every rank agrees) and shapes the answer. Errors are raised as `ApiError`.
"""

from __future__ import annotations

from typing import Annotated, Any

from django.conf import settings
from django.contrib.auth import authenticate, user_logged_in
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from ninja import Path, Query, Router
from pydantic import ValidationError as PydanticValidationError
from pydantic import WithJsonSchema

from .. import idempotency, leaderboard, selectors, services, tokens
from ..models import Board, Programmer
from ..rules import HANDLE_PATTERN, handle_validator
from . import auth
from .errors import ApiError
from .idempotent import body_fingerprint, idempotent_response
from .parser import json_body
from .schemas import (
    BOARD_SLUG_PATTERN,
    AccessToken,
    BoardList,
    BoardPage,
    BoardQuery,
    Credentials,
    Error,
    GroupRanklist,
    GroupsQuery,
    HandleMatches,
    MeQuery,
    ProblemSolvers,
    ProblemsPage,
    ProblemsQuery,
    ProgrammerActivity,
    ProgrammerSearchQuery,
    ScoreRange,
    ScoreRangeQuery,
    SolveAnswer,
    SolveRequest,
    SolversQuery,
    Standing,
)

router = Router()

# Path parameters are looked up, not validated: anything the URL route takes that names no
# board or programmer is a 404. The patterns in the document are there for clients.
BoardSlug = Annotated[
    str, WithJsonSchema({"type": "string", "pattern": BOARD_SLUG_PATTERN, "maxLength": 50})
]
HandleText = Annotated[str, WithJsonSchema({"type": "string", "pattern": HANDLE_PATTERN})]
BOARD = Path(description="The board's slug", example="last-7-days")
HANDLE = Path(description="The programmer's handle (any case)", example="Alice")


def read(path: str, **options: Any):
    """GET, and HEAD on the same view (as Django's own views answer), described once."""

    def decorator(view):
        router.add_api_operation(path, ["HEAD"], view, include_in_schema=False, **options)
        return router.get(path, **options)(view)

    return decorator


# --- lookups ---------------------------------------------------------------------------------


def board_or_404(slug: str) -> Board:
    board = selectors.boards_visible().filter(slug=slug).first()
    if board is None:
        raise ApiError(404, "unknown_board", f"There is no board {slug[:64]!r}.")
    return board


def programmer_or_404(
    handle: str, *, profile_for: User | AnonymousUser | None = None
) -> Programmer:
    """The programmer with this handle; with `profile_for`, only one whose profile that user may
    see (`Programmer.profile_shown_to`), as the profile page: 404 otherwise."""
    programmer = None
    try:
        handle_validator(handle)
    except ValidationError:
        pass  # not a handle at all: nobody has it
    else:
        programmer = selectors.programmer_by_handle(handle)
    if programmer is not None and profile_for is not None:
        programmer = programmer if programmer.profile_shown_to(profile_for) else None
    if programmer is None:
        raise ApiError(404, "unknown_programmer", f"There is no programmer {handle[:32]!r}.")
    return programmer


def board_day(board: Board, query: BoardQuery) -> int:
    """The board day the query asks for (today by default), or 400 `bad_date`."""
    today = services.today()
    day = today if query.date is None else leaderboard.date_to_day(query.date)
    if board.spec.is_all_time and day != today:
        # As on the page: the all-time board keeps current totals, not past days.
        raise ApiError(400, "bad_date", "The all-time board keeps current totals only.")
    if not selectors.day_is_browsable(board, day):
        raise ApiError(400, "bad_date", "That day's board is not kept (too old or too far ahead).")
    return day


# --- shaping answers -------------------------------------------------------------------------


def paging(page: selectors.Paged) -> dict:
    """The fields every paginated answer starts with."""
    return {
        "total": page.total,
        "page": page.page,
        "page_size": page.page_size,
        "pages": page.pages,
    }


def row_json(row: selectors.Row) -> dict:
    return {"rank": row.rank, "handle": row.handle, "score": row.score}


def board_json(board: Board) -> dict:
    return {
        "slug": board.slug,
        "title": board.title,
        "window": board.window,
        "window_days": board.window_days if board.is_rolling else None,
        "metric": board.metric,
        "score_label": board.score_label,
        "ties": board.ties,
    }


def standing_json(*, board: Board, programmer: Programmer, query: BoardQuery) -> dict:
    """A programmer's standing with their neighbours and forecast."""
    found = selectors.programmer_around(
        board=board,
        programmer=programmer,
        day=board_day(board, query),
        around=query.around,
        scope=query.scope,
        forecast_days=board.spec.span,
    )
    standing, above, below, forecast = found.standing, found.above, found.below, found.forecast
    return {
        "board": board.slug,
        "date": leaderboard.day_to_date(standing.day),
        "handle": programmer.handle,
        "rank": standing.rank,
        "score": standing.score,
        "total": standing.total,
        "percentile": standing.percentile,
        "above": [row_json(row) for row in above],
        "below": [row_json(row) for row in below],
        "forecast": [{"date": date, "score": score} for date, score in forecast],
    }


# --- views -----------------------------------------------------------------------------------


@router.post(
    "/solves",
    auth=auth.service_token,
    response={
        201: SolveAnswer,
        **{status: Error for status in (400, 401, 409, 413, 422, 429)},
    },
    operation_id="postSolve",
    summary="Report an accepted solve (idempotent by id)",
)
def solves(request: HttpRequest, solve: SolveRequest) -> HttpResponse:
    """Counts the first accepted solve of a (programmer, problem) on every board; a repeat is
    answered with counted=false. A solve of a competition's problem made during its freeze is
    answered with counted=true too, and shows on the boards once the competition has ended.
    Unknown handles and problem slugs are registered on first use.
    The same id with the same body returns the first answer (with the header
    Idempotent-Replayed: true); the same id with another body is 409. A solve in the future
    (beyond 5 minutes of clock skew) or older than the boards still change
    (LEADERBOARD_MAX_LATE_DAYS, 30 by default) is 422, and its id stays unused. The body may be
    64 KiB at most."""

    key = f"{request.auth.pk}:{solve.id}"

    def record() -> idempotency.Answer:
        counted = services.solve_report(
            handle=solve.programmer,
            problem_slug=solve.problem,
            solved_at=solve.solved_at,
            points=solve.points,
            score=solve.score,
            request=key,
        )
        return idempotency.Answer(status=201, body={"id": solve.id, "counted": counted})

    return idempotent_response(
        key=key,
        body_hash=body_fingerprint(request),
        work=record,
        rejected_code="solve_rejected",
        time_field="solved_at",
    )


@read("/boards", response=BoardList, operation_id="listBoards", summary="The visible boards")
def boards(request: HttpRequest) -> dict:
    """The visible boards, in display order."""
    return {"boards": [board_json(board) for board in selectors.boards_visible()]}


@read(
    "/boards/{slug:board}",
    response={200: BoardPage, 400: Error, 404: Error},
    operation_id="getBoardPage",
    summary="One page of a board day",
)
def board_page(request: HttpRequest, query: Query[BoardQuery], board: BoardSlug = BOARD) -> dict:
    """Ranks, handles and scores of one page; a page past the end is empty."""
    board_ = board_or_404(board)
    page = selectors.board_page(
        board=board_,
        day=board_day(board_, query),
        page=query.page,
        page_size=query.page_size,
        scope=query.scope,
    )
    return {
        "board": board_.slug,
        "date": page.date,
        **paging(page),
        "entries": [row_json(row) for row in page.rows],
    }


@read(
    "/boards/{slug:board}/groups",
    response={200: GroupRanklist, 400: Error, 404: Error},
    operation_id="getGroupRanklist",
    summary="The countries or the organizations of a board day ranked against each other",
)
def group_ranklist(
    request: HttpRequest, query: Query[GroupsQuery], board: BoardSlug = BOARD
) -> dict:
    """One page of the groups of `kind`, best first; a page past the end is empty. Each group's
    `group` is what `country` or `org` takes on the board endpoints, to rank its programmers."""
    board_ = board_or_404(board)
    page = selectors.group_ranklist(
        board=board_,
        kind=query.kind,
        day=board_day(board_, query),
        page=query.page,
        page_size=query.page_size,
    )
    return {
        "board": board_.slug,
        "date": page.date,
        "kind": page.kind,
        **paging(page),
        "entries": [
            {
                "rank": row.rank,
                "group": row.value,
                "name": row.name,
                "score": row.score,
                "members": row.members,
            }
            for row in page.rows
        ],
    }


@read(
    "/boards/{slug:board}/scores",
    response={200: ScoreRange, 400: Error, 404: Error},
    operation_id="getScoreRange",
    summary="How many programmers of a board day score in a range, and who they are",
)
def score_range(
    request: HttpRequest, query: Query[ScoreRangeQuery], board: BoardSlug = BOARD
) -> dict:
    """`count` programmers have a score from `min` to `max` that day (`max` absent: `min` or
    more); `entries` is one page of them in rank order, with the ranks of the whole board; a
    page past them is empty. Read from the day's histogram and the page's sets: the same cost
    at any size. `max` below `min` is 400 `invalid_parameter`."""
    board_ = board_or_404(board)
    found = selectors.board_score_range(
        board=board_,
        min_score=query.min,
        max_score=query.max,
        day=board_day(board_, query),
        page=query.page,
        page_size=query.page_size,
        scope=query.scope,
    )
    return {
        "board": board_.slug,
        "date": found.date,
        "min": found.min_score,
        "max": found.max_score,
        "count": found.total,
        "page": found.page,
        "page_size": found.page_size,
        "pages": found.pages,
        "entries": [row_json(row) for row in found.rows],
    }


@read(
    "/boards/{slug:board}/programmers/{handle}",
    response={200: Standing, 400: Error, 404: Error},
    operation_id="getStanding",
    summary="A programmer's rank, neighbours and forecast on a board day",
)
def programmer_standing(
    request: HttpRequest,
    query: Query[BoardQuery],
    board: BoardSlug = BOARD,
    handle: HandleText = HANDLE,
) -> dict:
    """`rank` is null when the programmer is not on the board that day."""
    return standing_json(
        board=board_or_404(board), programmer=programmer_or_404(handle), query=query
    )


@read(
    "/me",
    auth=auth.access_token,
    response={200: Standing, 400: Error, 401: Error, 404: Error},
    operation_id="getMyStanding",
    summary="The access token holder's own standing",
)
def me(request: HttpRequest, query: Query[MeQuery]) -> dict:
    """On the default board unless `board` names another."""
    board = selectors.board_default() if query.board is None else board_or_404(query.board)
    if board is None:
        raise ApiError(404, "unknown_board", "There are no boards yet.")
    programmer = Programmer.objects.filter(user=request.auth).first()
    if programmer is None:
        raise ApiError(404, "no_programmer", "This account has no programmer profile yet.")
    return standing_json(board=board, programmer=programmer, query=query)


@read(
    "/programmers",
    response={200: HandleMatches, 400: Error, 404: Error},
    operation_id="searchProgrammers",
    summary="The programmers whose handle starts with a prefix, with their ranks on a board day",
)
def programmers_search(request: HttpRequest, query: Query[ProgrammerSearchQuery]) -> dict:
    """What the board page's search suggests as you type, and what it lists: at most 20
    handles in handle order (any case), each with its rank and score (`rank` null when not on
    the board), and how many more match."""
    board = selectors.board_default() if query.board is None else board_or_404(query.board)
    if board is None:
        raise ApiError(404, "unknown_board", "There are no boards yet.")
    found = selectors.programmers_search(
        board=board, prefix=query.prefix, day=board_day(board, query), scope=query.scope
    )
    return {
        "board": board.slug,
        "date": found.date,
        "prefix": query.prefix,
        "entries": [
            {"handle": match.handle, "rank": match.rank, "score": match.score}
            for match in found.matches
        ],
        "more": found.more,
        "more_exact": found.count_is_exact,
    }


@read(
    "/programmers/{handle}/activity",
    response={200: ProgrammerActivity, 404: Error},
    by_alias=True,
    operation_id="getProgrammerActivity",
    summary="A programmer's last 365 days of solves, active days and streaks",
)
def programmer_activity(request: HttpRequest, handle: HandleText = HANDLE) -> dict:
    """The days of the last 365 (up to today, in the leaderboard time zone) with solves, the
    problems solved and the active days among them, and the current and longest streaks, as
    the profile shows them. The definitions are those of the schema below. Like the profile: 404
    for a banned programmer or a deleted account, and for a hidden programmer unless the
    session's user is staff."""
    programmer = programmer_or_404(handle, profile_for=request.user)
    year = selectors.programmer_year(programmer=programmer)
    return {
        "handle": year.handle,
        "from": year.first_date,
        "to": year.last_date,
        "days": {date.isoformat(): count for date, count in year.dated().items()},
        "solved": year.solved,
        "active_days": year.active_days,
        "current_streak": year.current_streak,
        "longest_streak": year.longest_streak,
    }


@read(
    "/problems",
    response={200: ProblemsPage, 400: Error},
    operation_id="listProblems",
    summary="The published problems with their solver counts, a page at a time",
)
def problems(request: HttpRequest, query: Query[ProblemsQuery]) -> dict:
    """Paginated like the boards: `total` problems, this `page` of `page_size`, in slug order;
    a page past the end is empty. `solvers` counts the programmers on the boards who solved
    each (kept up to date by every solve, hide and ban; never counted at request time)."""
    page = selectors.problems_page(page=query.page, page_size=query.page_size)
    return {
        **paging(page),
        "entries": [
            {
                "slug": row.problem.slug,
                "title": row.problem.title,
                "points": row.problem.points,
                "solvers": row.solvers,
            }
            for row in page.rows
        ],
    }


@read(
    "/problems/{slug}/solvers",
    response={200: ProblemSolvers, 400: Error, 404: Error},
    operation_id="getProblemSolvers",
    summary="Everybody who solved a problem, in solve order, a page at a time",
)
def problem_solvers(
    request: HttpRequest,
    query: Query[SolversQuery],
    slug: str = Path(description="The problem's slug", example="p1"),
) -> dict:
    """50 solvers a page, earliest first (then by programmer), hidden and banned programmers
    left out as `count` leaves them out, and a frozen competition's solves only once it ends.
    A page past the last is 404 `page_out_of_range` (page 1 of a problem nobody solved is an
    empty page)."""
    problem = selectors.problems_published().filter(slug=slug).first()
    if problem is None:
        raise ApiError(404, "unknown_problem", f"There is no problem {slug[:64]!r}.")
    page = selectors.problem_solvers_page(problem=problem, page=query.page)
    if page.page > page.pages:
        raise ApiError(
            404, "page_out_of_range", f"There are {page.pages} pages of solvers: ask for 1 to that."
        )
    return {
        "problem": problem.slug,
        "count": page.total,
        "page": page.page,
        "page_size": page.page_size,
        "pages": page.pages,
        "solvers": [
            {
                "number": row.number,
                "handle": row.handle,
                "country": row.country,
                "solved_at": row.solved_at,
            }
            for row in page.rows
        ],
    }


def credentials_of(request: HttpRequest) -> Credentials:
    """Username and password from a JSON body of a request sent by the client itself, not by a
    page of another site in a browser.

    The API takes no cookies, so it needs no CSRF token; but a page anywhere could still make
    its visitors' browsers post wrong passwords here and lock them out of their own accounts
    (the lockout counts per username and address). A browser cannot send a JSON body to another
    site without that site's leave (CORS), so only JSON is taken (415 for anything else, a form
    included), and a request the browser itself marks as cross-site (Sec-Fetch-Site) is 403."""
    if request.headers.get("Sec-Fetch-Site", "").lower() == "cross-site":
        raise ApiError(403, "cross_site_request", "Pages of other sites cannot log in here.")
    if request.content_type != "application/json":
        raise ApiError(
            415, "unsupported_media_type", "Send the credentials as JSON (application/json)."
        )
    try:
        return Credentials.model_validate(json_body(request))
    except PydanticValidationError as error:
        raise ApiError(400, "invalid_body", "Send a username and a password.") from error


@router.post(
    "/auth/token",
    response={
        200: AccessToken,
        **{status: Error for status in (400, 401, 403, 413, 415, 429)},
    },
    operation_id="createAccessToken",
    summary="Trade a username and password for a one-hour access token",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": Credentials.model_json_schema()}},
        }
    },
)
def auth_token(request: HttpRequest) -> dict:
    """Failed logins are counted per username and client address (django-axes, the same
    count as the login page's and the admin's): too many lock that pair out for a while, with
    429, even for the right password. The username is matched in any case, like a handle. The
    body is JSON only (415 otherwise), and a browser's cross-site request is 403. A token ends
    after an hour, or at once when the account's password changes or is reset."""
    credentials = credentials_of(request)
    user = authenticate(request, username=credentials.username, password=credentials.password)
    if getattr(request, "axes_locked_out", False):
        raise locked_out()
    if user is None:
        raise ApiError(401, "invalid_credentials", "Wrong username or password.")
    # A token is a login without a session: the signal lets axes clear this pair's failures
    # and Django stamp last_login, as for a login on the page.
    user_logged_in.send(sender=type(user), request=request, user=user)
    token = tokens.access_token_issue(user=user)
    return {"token": token.token, "expires_at": token.expires_at}


def locked_out() -> ApiError:
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    return ApiError(
        429,
        "too_many_attempts",
        "Too many failed logins: try again later.",
        {"Retry-After": str(seconds)},
    )

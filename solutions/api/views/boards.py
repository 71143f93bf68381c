"""The boards: the list, a page of a board day, its groups ranked against each other, how many
score in a range, and a programmer's standing (`/me`: the access token holder's own)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Query

from ... import leaderboard, selectors
from ...models import Board, Programmer
from .. import auth
from ..errors import ApiError
from ..schemas.boards import (
    BoardList,
    BoardPage,
    BoardQuery,
    GroupRanklist,
    GroupsQuery,
    MeQuery,
    ScoreRange,
    ScoreRangeQuery,
    Standing,
)
from ..schemas.fields import Error
from .common import (
    BOARD,
    HANDLE,
    ApiRouter,
    BoardSlug,
    HandleText,
    board_day,
    board_day_asked,
    board_or_404,
    paging,
    programmer_or_404,
    row_json,
)

router = ApiRouter()


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


@router.read("/boards", response=BoardList, operation_id="listBoards", summary="The visible boards")
def boards(request: HttpRequest) -> dict:
    """The visible boards, in display order."""
    return {"boards": [board_json(board) for board in selectors.boards_visible()]}


@router.read(
    "/boards/{slug:board}",
    response={200: BoardPage, 400: Error, 404: Error},
    operation_id="getBoardPage",
    summary="One page of a board day",
)
def board_page(request: HttpRequest, query: Query[BoardQuery], board: BoardSlug = BOARD) -> dict:
    """Ranks, handles and scores of one page; a page past the end is empty."""
    asked = board_day_asked(board, query)
    page = selectors.board_page(
        board=asked.board,
        day=asked.day,
        page=query.page,
        page_size=query.page_size,
        scope=asked.scope,
    )
    return {
        "board": asked.board.slug,
        "date": page.date,
        **paging(page),
        "entries": [row_json(row) for row in page.rows],
    }


@router.read(
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
    asked = board_day_asked(board, query)
    page = selectors.group_ranklist(
        board=asked.board,
        kind=query.kind,
        day=asked.day,
        page=query.page,
        page_size=query.page_size,
    )
    return {
        "board": asked.board.slug,
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


@router.read(
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
    asked = board_day_asked(board, query)
    found = selectors.board_score_range(
        board=asked.board,
        min_score=query.min,
        max_score=query.max,
        day=asked.day,
        page=query.page,
        page_size=query.page_size,
        scope=asked.scope,
    )
    return {
        "board": asked.board.slug,
        "date": found.date,
        "min": found.min_score,
        "max": found.max_score,
        "count": found.total,
        "page": found.page,
        "page_size": found.page_size,
        "pages": found.pages,
        "entries": [row_json(row) for row in found.rows],
    }


@router.read(
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


@router.read(
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

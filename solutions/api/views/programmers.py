"""Programmers: the handle search of the board page, and a programmer's year of activity."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Query

from ... import selectors
from ..errors import ApiError
from ..schemas.boards import HandleMatches, ProgrammerSearchQuery
from ..schemas.fields import Error
from ..schemas.problems import ProgrammerActivity
from .common import HANDLE, ApiRouter, HandleText, board_day, board_or_404, programmer_or_404

router = ApiRouter()


@router.read(
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


@router.read(
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

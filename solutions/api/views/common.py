"""What the API's views share: the router that also answers HEAD, the path parameters, the
lookups that answer 404 or 400 (a board, a programmer, a board day) and the shapes of rows and
pages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from ninja import Path, Router
from pydantic import WithJsonSchema

from ... import clock, leaderboard, selectors
from ...models import Board, Programmer
from ...rules import HANDLE_PATTERN, handle_validator
from ..errors import ApiError
from ..schemas.boards import BoardQuery
from ..schemas.fields import BOARD_SLUG_PATTERN


class ApiRouter(Router):
    def read(self, path: str, **options: Any):
        """GET, and HEAD on the same view (as Django's own views answer), described once."""

        def decorator(view):
            self.add_api_operation(path, ["HEAD"], view, include_in_schema=False, **options)
            return self.get(path, **options)(view)

        return decorator


# Path parameters are looked up, not validated: anything the URL route takes that names no
# board or programmer is a 404. The patterns in the document are there for clients.
BoardSlug = Annotated[
    str, WithJsonSchema({"type": "string", "pattern": BOARD_SLUG_PATTERN, "maxLength": 50})
]
HandleText = Annotated[str, WithJsonSchema({"type": "string", "pattern": HANDLE_PATTERN})]
BOARD = Path(description="The board's slug", example="last-7-days")
HANDLE = Path(description="The programmer's handle (any case)", example="Alice")


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
    today = clock.today()
    day = today if query.date is None else leaderboard.date_to_day(query.date)
    if board.spec.is_all_time and day != today:
        # As on the page: the all-time board keeps current totals, not past days.
        raise ApiError(400, "bad_date", "The all-time board keeps current totals only.")
    if not selectors.day_is_browsable(board, day):
        raise ApiError(400, "bad_date", "That day's board is not kept (too old or too far ahead).")
    return day


@dataclass(frozen=True)
class BoardDay:
    """What a board endpoint's query asks for: which board, which day, which programmers."""

    board: Board
    day: int
    scope: str


def board_day_asked(slug: str, query: BoardQuery) -> BoardDay:
    """The opening of every board endpoint: the board (or 404 `unknown_board`), the day (or 400
    `bad_date`) and the scope of the query."""
    board = board_or_404(slug)
    return BoardDay(board=board, day=board_day(board, query), scope=query.scope)


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

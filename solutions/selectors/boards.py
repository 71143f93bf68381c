"""The boards: which are shown (kept in Django's cache), the default one, a page of a board day,
a range of its scores, how many score at least so much, the days one can browse and the
calendar periods of week and month boards."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.core.cache import cache
from django.db import transaction
from django.db.models import QuerySet

from .. import leaderboard, recent
from ..clock import today
from ..models import Board
from .common import PAGE_SIZE, BoardPage, day_key, rows_ranked

# Every page lists the visible boards (its tabs, its ETag), which change only when staff edit a
# board: they are kept in Django's cache, dropped on every save of a board, and each process
# keeps them a moment in its own memory (`recent`): another process sees an edit within
# BOARDS_RECENT_SECONDS (within BOARDS_CACHE_SECONDS with a cache of its own, no REDIS_URL).
BOARDS_CACHE_KEY = "boards-visible"
BOARDS_CACHE_SECONDS = 10
BOARDS_RECENT_SECONDS = 2


def boards_visible() -> QuerySet[Board]:
    return Board.objects.filter(visible=True)


def boards_visible_cached() -> list[Board]:
    """The visible boards, from this process's memory or Django's cache (see above)."""
    return recent.recently(BOARDS_CACHE_KEY, BOARDS_RECENT_SECONDS, _boards_visible_shared)


def _boards_visible_shared() -> list[Board]:
    boards = cache.get(BOARDS_CACHE_KEY)
    if boards is None:
        boards = list(boards_visible())
        cache.set(BOARDS_CACHE_KEY, boards, BOARDS_CACHE_SECONDS)
    return boards


def boards_forget(**_signal: object) -> None:
    """Drop the cached boards (on every save or delete of a board): now, for this request, and
    again once the edit is committed, so no other process keeps what it read just before."""
    _boards_drop()
    transaction.on_commit(_boards_drop)


def _boards_drop() -> None:
    cache.delete(BOARDS_CACHE_KEY)
    recent.forget(BOARDS_CACHE_KEY)


def board_default() -> Board | None:
    return boards_visible().filter(is_default=True).first() or boards_visible().first()


def board_page(
    *,
    board: Board,
    day: int | None = None,
    page: int = 1,
    page_size: int = PAGE_SIZE,
    scope: str = "",
) -> BoardPage:
    """One page of a board day: the day's manifest, then the one or two sets holding the page
    (two `_id` reads at any offset and any size)."""
    day = today() if day is None else day
    offset = (page - 1) * page_size
    found = leaderboard.page(board.slug, day_key(board, day), scope, offset, page_size)
    result = BoardPage(
        board=board,
        day=day,
        scope=scope,
        total=leaderboard.board_total(found.histogram),
        page=page,
        page_size=page_size,
    )
    result.rows = rows_ranked(board, found.members, found.histogram, offset)
    return result


@dataclass(kw_only=True)
class ScoreRange(BoardPage):
    """A board page of the programmers whose score is in [min_score, max_score] (no upper bound
    when None): `total` counts them, `rows` is one page of them in rank order."""

    min_score: int
    max_score: int | None


def board_score_range(
    *,
    board: Board,
    min_score: int,
    max_score: int | None = None,
    day: int | None = None,
    page: int = 1,
    page_size: int = PAGE_SIZE,
    scope: str = "",
) -> ScoreRange:
    """How many programmers of a board day have a score from `min_score` to `max_score`, and
    page `page` of them in rank order. The listing order is best score first, so they are
    consecutive: the day's histogram (the root of its order) says how many and where they
    start (those scoring above `max_score` come first), then the one or two sets holding the
    page are read as for any page. The same reads as a board page, at any size; a page past
    the range is empty."""
    day = today() if day is None else day
    offset = (page - 1) * page_size
    read = leaderboard.score_range(
        board.slug, day_key(board, day), scope, (min_score, max_score), offset, page_size
    )
    found = ScoreRange(
        board=board,
        day=day,
        scope=scope,
        min_score=min_score,
        max_score=max_score,
        total=read.total,
        page=page,
        page_size=page_size,
    )
    found.rows = rows_ranked(board, read.members, read.histogram, read.above + offset)
    return found


def board_at_or_above(*, board: Board, score: int, day: int | None = None, scope: str = "") -> int:
    """How many programmers of a board day score `score` or more: the day's histogram alone."""
    day = today() if day is None else day
    histogram = leaderboard.histogram(board.slug, day_key(board, day), scope, at=[score])
    return leaderboard.at_or_above(histogram, score)


def day_is_browsable(board: Board, day: int) -> bool:
    """Days whose board is kept: from the oldest kept final board to today (the days after are
    a programmer's forecast, read from their entry: see `programmer_around`)."""
    now_day = today()
    return leaderboard.history_from(now_day) <= day <= now_day


@dataclass(frozen=True)
class Period:
    """One calendar period of a week or month board."""

    first_day: int
    last_day: int
    label: str

    @property
    def last_date(self) -> dt.date:
        return leaderboard.day_to_date(self.last_day)


def _period_label(board: Board, first_day: int) -> str:
    first = leaderboard.day_to_date(first_day)
    if board.window == leaderboard.MONTH:
        return first.strftime("%B %Y")
    return f"Week of {first.day} {first.strftime('%b %Y')}"


def board_periods(*, board: Board, day: int, count: int = 6) -> list[Period]:
    """The calendar period holding `day`, then up to `count` earlier ones whose final board is
    still kept (the board of a past period is the board of its last day)."""
    if board.window not in (leaderboard.WEEK, leaderboard.MONTH):
        return []
    window = board.spec
    periods = []
    while len(periods) <= count:
        first = window.start(day)
        periods.append(Period(first, window.end(first), _period_label(board, first)))
        day = first - 1
        if not day_is_browsable(board, day):
            break
    return periods

"""Where programmers stand: one programmer's rank and score on a board day (the one rank
selector every page and answer asks), with their neighbours and their coming days' scores,
their place in the listed order, and the places of a few at once. Each reads the programmers'
entries, then the day's order once, whatever the size of the board."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from .. import leaderboard
from ..clock import today
from ..models import Board, Programmer
from .common import Row, Standing, day_key, rank_of, rows_ranked


def programmer_standing(
    *, board: Board, programmer: Programmer, day: int | None = None, scope: str = ""
) -> Standing:
    """The programmer's rank and score on a board day: their entry, then the day's histogram (the
    order's root), whatever the size of the board (unique ranks read their place in the order)."""
    found = programmer_around(board=board, programmer=programmer, day=day, around=0, scope=scope)
    return found.standing


@dataclass(frozen=True)
class Around:
    """A programmer's standing with the programmers listed just above and below them, and their
    scores of the coming days."""

    standing: Standing
    above: list[Row] = field(default_factory=list)
    below: list[Row] = field(default_factory=list)
    forecast: list[tuple[dt.date, int]] = field(default_factory=list)


def programmer_around(
    *,
    board: Board,
    programmer: Programmer,
    day: int | None = None,
    around: int = 4,
    scope: str = "",
    forecast_days: int = 0,
) -> Around:
    """A programmer's standing on a board day, the `around` programmers above and below, and their
    scores of the next `forecast_days` days: one read of their entry and one of the day's
    order (`leaderboard.standing`: the journal's part, the root, a node a level, the sets around
    them; the root alone when only a shared rank is asked), each document read once."""
    day = today() if day is None else day
    ahead = _forecast_days(board, forecast_days) if programmer.on_boards else []
    unique = board.ties == Board.UNIQUE
    found = leaderboard.standing(
        board.slug,
        day_key(board, day),
        programmer.pk,
        scope=scope,
        listed=programmer.on_boards,
        places=around > 0 or unique,
        around=around,
        ahead=ahead,
    )
    forecast = [(leaderboard.day_to_date(d), found.forecast[d]) for d in ahead]
    near, member = found.near, found.member
    total = leaderboard.board_total(near.histogram)
    if member is None:
        standing = Standing(board, day, programmer.handle, rank=None, score=0, total=total)
        return Around(standing, forecast=forecast)
    row = _row(near.histogram, member, near.position if unique else None, programmer)
    standing = _standing(board, day, row, total, member.key)
    if near.position is None:
        return Around(standing, forecast=forecast)
    above, below = _rows_around(board, near.histogram, near)
    return Around(standing, above, below, forecast)


def _row(
    histogram: dict[int, int],
    member: leaderboard.Member,
    position: int | None,
    programmer: Programmer,
) -> Row:
    """A programmer's row from their member of the order, ranked by `position` (from 0) when
    the board's ties are broken, else by their score (`position` None)."""
    return Row(
        rank_of(histogram, member.score, position),
        programmer.handle,
        member.score,
        programmer.pk,
        leaderboard.at_or_above(histogram, member.score),
    )


def _standing(board: Board, day: int, row: Row, total: int, key: int) -> Standing:
    """The standing of a programmer on the board, from their row."""
    return Standing(
        board, day, row.handle, row.rank, row.score, total, key, row.programmer_id, row.at_or_above
    )


def _rows_around(
    board: Board, histogram: dict[int, int], near: leaderboard.Neighbours
) -> tuple[list[Row], list[Row]]:
    """The rows above and below the member at `near.position`, of the members read around it."""
    rows = rows_ranked(board, near.members, histogram, near.first)
    own = near.position - near.first
    return rows[:own], rows[own + 1 :]


def _forecast_days(board: Board, days: int) -> list[int]:
    """The coming days whose scores a forecast shows, at most the board's span (none on an
    all-time board)."""
    if board.spec.is_all_time or days <= 0:
        return []
    now_day = today()
    return [now_day + offset for offset in range(1, min(days, board.spec.span) + 1)]


def programmer_position(
    *, board: Board, programmer: Programmer, day: int | None = None, scope: str = ""
) -> int | None:
    """The programmer's 1-based place in the listed order of a board day (which page holds
    them), None when not on it: their entry, then their place in the order. With shared ranks
    several programmers hold one rank, so the place is the rank plus those listed before them
    inside the tie."""
    day = today() if day is None else day
    position = leaderboard.position(
        board.slug, day_key(board, day), programmer.pk, scope=scope, listed=programmer.on_boards
    )
    return None if position is None else position + 1


@dataclass(frozen=True)
class Places:
    """Where a few programmers stand on a board day: {programmer id: their row} for those on it,
    the number on the board, and one of them with their neighbours when asked (`around_of`)."""

    rows: dict[int, Row]
    total: int
    around: Around | None = None


def programmers_places(
    *,
    board: Board,
    programmers: list[Programmer],
    day: int,
    scope: str = "",
    around_of: Programmer | None = None,
    around: int = 4,
) -> Places:
    """Where a few programmers stand on a board day, as `programmer_standing` says it for each,
    and `around_of` (one of them) with the `around` programmers above and below: one `$in` read
    of their entries, then one read of the day's order (`leaderboard.places`; the root alone for
    shared ranks with no neighbours), however many they are."""
    on_boards = {programmer.pk: programmer for programmer in programmers if programmer.on_boards}
    found = leaderboard.places(
        board.slug,
        day_key(board, day),
        on_boards,
        scope=scope,
        positions=board.ties == Board.UNIQUE,
        around_of=None if around_of is None else around_of.pk,
        around=around,
    )
    histogram = found.histogram
    rows = {
        pid: _row(histogram, member, found.positions.get(pid), on_boards[pid])
        for pid, member in found.members.items()
    }
    total = leaderboard.board_total(histogram)
    if around_of is None:
        return Places(rows, total)
    row = rows.get(around_of.pk)
    if row is None or found.near is None:
        standing = Standing(board, day, around_of.handle, rank=None, score=0, total=total)
        return Places(rows, total, Around(standing))
    standing = _standing(board, day, row, total, found.members[around_of.pk].key)
    if found.near.position is None:
        return Places(rows, total, Around(standing))
    above, below = _rows_around(board, histogram, found.near)
    return Places(rows, total, Around(standing, above, below))

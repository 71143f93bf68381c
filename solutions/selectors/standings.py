"""Where programmers stand: one programmer's rank and score on a board day (the one rank
selector every page and answer asks), with their neighbours and their coming days' scores,
their place in the listed order, and the places of a few at once. Each reads the programmers'
entries, then the day's order once, whatever the size of the board."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from .. import leaderboard
from ..clock import today
from ..leaderboard import encoding, entries, reading
from ..models import Board, Programmer
from .common import Row, Standing, day_key, rank_of, rows_ranked

# What `_neighbourhood` finds: (the histogram, exact at the scores read, the record's place or
# None, the records read, the place of the first of them).
Neighbourhood = tuple[dict[int, int], int | None, list[bytes], int]


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
    order (`reading.order_read`: the journal's part, the root, a node a level, the sets around
    them; the root alone when only a shared rank is asked), each document read once."""
    day = today() if day is None else day
    key = day_key(board, day)
    ahead = _forecast_days(board, forecast_days) if programmer.on_boards else []
    entry = entries.entry_read(board.slug, programmer.pk, [key, *map(str, ahead)])
    forecast = [(leaderboard.day_to_date(d), entries.entry_sum(entry, str(d))) for d in ahead]
    member = entries.entry_member(entry, key, scope) if programmer.on_boards else None
    if member is None:
        total = leaderboard.board_total(reading.histogram_read(board.slug, key, scope))
        standing = Standing(board, day, programmer.handle, rank=None, score=0, total=total)
        return Around(standing, forecast=forecast)
    unique = board.ties == Board.UNIQUE
    histogram, position, records, first = _order_around(
        board, key, scope, member.record(), around, places=around > 0 or unique
    )
    row = _row(histogram, member, position if unique else None, programmer)
    standing = _standing(board, day, row, leaderboard.board_total(histogram), member.key)
    if position is None:
        return Around(standing, forecast=forecast)
    above, below = _rows_around(board, histogram, position, records, first)
    return Around(standing, above, below, forecast)


def _row(
    histogram: dict[int, int], member: encoding.Member, position: int | None, programmer: Programmer
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


def _order_around(
    board: Board, key: str, scope: str, record: bytes, around: int, *, places: bool
) -> Neighbourhood:
    """The day's histogram and, with `places`, what `_neighbourhood` finds of `record` in one
    read of the order; without, the root's histogram alone (no place, no records)."""
    if not places:
        at = reading.rank_thresholds([encoding.record_score(record)])
        return reading.histogram_read(board.slug, key, scope, at=at), None, [], 0
    return reading.order_read(
        board.slug, key, scope, lambda view: _neighbourhood(view, record, around)
    )


def _rows_around(
    board: Board, histogram: dict[int, int], position: int, records: list[bytes], first: int
) -> tuple[list[Row], list[Row]]:
    """The rows above and below the member at `position`, of the records read from `first`."""
    rows = rows_ranked(board, [encoding.Member.from_record(r) for r in records], histogram, first)
    own = position - first
    return rows[:own], rows[own + 1 :]


def _neighbourhood(view: reading.OrderView, record: bytes, around: int) -> Neighbourhood:
    """(the histogram, exact at their scores, the record's place, the records from `first` to
    `around` past it, first)."""
    position = view.position(record)
    if position is None or around <= 0:
        at = reading.rank_thresholds([encoding.record_score(record)])
        return view.histogram_at(at), position, [], position or 0
    first = max(0, position - around)
    records = view.records(first, position - first + 1 + around)
    at = reading.rank_thresholds(map(encoding.record_score, [record, *records]))
    return view.histogram_at(at), position, records, first


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
    key = day_key(board, day)
    entry = entries.entry_read(board.slug, programmer.pk, [key])
    member = entries.entry_member(entry, key, scope) if programmer.on_boards else None
    if member is None:
        return None
    position = reading.member_position(board.slug, key, scope, member)
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
    of their entries, then one read of the day's order (`reading.order_read`; the root alone for
    shared ranks with no neighbours), however many they are."""
    key = day_key(board, day)
    on_boards = {programmer.pk: programmer for programmer in programmers if programmer.on_boards}
    members = entries.entries_members(board.slug, on_boards, key, scope) if on_boards else {}
    wanted = members.get(around_of.pk) if around_of is not None else None
    histogram, positions, near = _places_read(board, key, scope, members, wanted, around)
    rows = {
        pid: _row(histogram, member, positions.get(pid), on_boards[pid])
        for pid, member in members.items()
    }
    total = leaderboard.board_total(histogram)
    if around_of is None:
        return Places(rows, total)
    row = rows.get(around_of.pk)
    if row is None or near is None:
        standing = Standing(board, day, around_of.handle, rank=None, score=0, total=total)
        return Places(rows, total, Around(standing))
    standing = _standing(board, day, row, total, wanted.key)
    _histogram, position, records, first = near
    if position is None:
        return Places(rows, total, Around(standing))
    above, below = _rows_around(board, histogram, position, records, first)
    return Places(rows, total, Around(standing, above, below))


def _places_read(
    board: Board,
    key: str,
    scope: str,
    members: dict[int, encoding.Member],
    wanted: encoding.Member | None,
    around: int,
) -> tuple[dict[int, int], dict[int, int | None], Neighbourhood | None]:
    """(the day's histogram, exact at the scores read, {programmer id: their place} when the
    board's ties are broken, what `_neighbourhood` finds of `wanted`): one read of the order,
    or of its root alone for shared ranks with nobody's neighbours asked."""
    unique = board.ties == Board.UNIQUE
    if not unique and wanted is None:
        at = reading.rank_thresholds(member.score for member in members.values())
        return reading.histogram_read(board.slug, key, scope, at=at), {}, None

    def question(view: reading.OrderView):
        positions = {pid: view.position(m.record()) for pid, m in members.items()} if unique else {}
        near = _neighbourhood(view, wanted.record(), around) if wanted else None
        seen = [member.score for member in members.values()]
        seen += map(encoding.record_score, near[2] if near else [])
        return view.histogram_at(reading.rank_thresholds(seen)), positions, near

    return reading.order_read(board.slug, key, scope, question)

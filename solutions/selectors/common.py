"""What the reads share: a board's row, a page of anything, a board page, one programmer's
standing, and how a row's rank is told (shared by a score, or a place when ties are broken)."""

from __future__ import annotations

import datetime as dt
import functools
import math
from dataclasses import dataclass, field

from .. import leaderboard
from ..models import Board, Programmer

PAGE_SIZE = 25


@dataclass(frozen=True)
class Row:
    rank: int
    handle: str
    score: int
    programmer_id: int
    at_or_above: int = 0  # programmers with this score or better (0: not known), for the tiers


class Paged:
    """Page `page` of `total` rows, `page_size` a page, and how many pages there are (at least
    one, so an empty list still has its page 1)."""

    total: int
    page: int
    page_size: int

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.page_size))


@dataclass
class BoardPage(Paged):
    board: Board
    day: int
    scope: str
    total: int
    page: int
    page_size: int
    rows: list[Row] = field(default_factory=list)

    @functools.cached_property
    def programmers(self) -> dict[int, Programmer]:
        """The programmers of the rows, read in one query for everything the page shows of them
        (their countries and organizations, their places the day before)."""
        return Programmer.objects.in_bulk([row.programmer_id for row in self.rows])

    def __getstate__(self) -> dict:
        # Cached without them: a page from the cache is rendered again only for a viewer on it.
        return {name: value for name, value in self.__dict__.items() if name != "programmers"}

    @property
    def date(self) -> dt.date:
        return leaderboard.day_to_date(self.day)


@dataclass(frozen=True)
class Standing:
    """Where one programmer stands on one board day."""

    board: Board
    day: int
    handle: str
    rank: int | None
    score: int
    total: int
    key: int = 0
    programmer_id: int = 0
    at_or_above: int = 0  # programmers with this score or better

    @property
    def percentile(self) -> float | None:
        return leaderboard.percentile(self.rank, self.total) if self.rank else None


def day_key(board: Board, day: int) -> str:
    return leaderboard.day_key(board.spec, day)


def rank_of(histogram: dict[int, int], score: int, position: int | None) -> int:
    """A score's rank: shared by everybody with that score, or the place itself (`position`,
    from 0) on a board whose ties are broken."""
    return leaderboard.shared_rank(histogram, score) if position is None else position + 1


def rows_ranked(
    board: Board, members: list[leaderboard.Member], histogram: dict[int, int], first_offset: int
) -> list[Row]:
    """Board rows in listing order with their ranks: shared (from the histogram) or unique (by
    position)."""
    unique = board.ties == Board.UNIQUE
    return [
        Row(
            rank=rank_of(histogram, member.score, first_offset + position if unique else None),
            handle=member.handle,
            score=member.score,
            programmer_id=member.programmer_id,
            at_or_above=leaderboard.at_or_above(histogram, member.score),
        )
        for position, member in enumerate(members)
    ]

"""Groups ranked against each other: a board day's ranklist of countries or organizations, and
where one group stands on it (`leaderboard.group_page`, `leaderboard.group_standing`; the engine's
`groups` module says how a group's score is kept)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django_countries.fields import Country

from .. import leaderboard
from ..clock import today
from ..models import Board
from .common import PAGE_SIZE, Paged, day_key

GROUP_KINDS = leaderboard.GROUP_KINDS  # "country", "org"


@dataclass(frozen=True)
class GroupRow:
    """A country or an organization on a board day's ranklist of groups."""

    rank: int
    kind: str
    value: str  # what `?country=` or `?org=` takes: the country's code, the organization's name
    key: int  # the exact score's key: equal keys, equal scores
    members: int  # the group's programmers on the board that day

    @property
    def name(self) -> str:
        """The group in words: the country's name, or the organization's."""
        if self.kind == "country":
            return Country(code=self.value).name or self.value
        return self.value

    decimals: int = 1  # as many as its page needs to tell its scores apart

    @property
    def score(self) -> float:
        """The group's score with one decimal (the API's)."""
        return leaderboard.group_score_shown(self.key)

    @property
    def score_text(self) -> str:
        """The score as its page writes it: with the decimals that tell the page's apart."""
        return leaderboard.group_score_text(self.key, self.decimals)


@dataclass
class GroupPage(Paged):
    board: Board
    day: int
    kind: str
    total: int  # groups of that kind with somebody on the board that day
    page: int
    page_size: int
    rows: list[GroupRow] = field(default_factory=list)

    @property
    def date(self) -> dt.date:
        return leaderboard.day_to_date(self.day)

    @property
    def of_countries(self) -> bool:
        return self.kind == "country"


def _group_row(group: leaderboard.GroupPlace, decimals: int = 1) -> GroupRow:
    """A group's row from its place on the ranklist."""
    kind, value = group.scope.split(":", 1)
    return GroupRow(group.rank, kind, value, group.key, group.members, decimals)


def group_ranklist(
    *, board: Board, kind: str, day: int | None = None, page: int = 1, page_size: int = PAGE_SIZE
) -> GroupPage:
    """One page of a board day's ranklist of countries (`kind="country"`) or organizations
    (`"org"`), best first: the ranklist's journal part, its root, a node a level and the sets
    holding the page from the group before it (by `_id`, at any offset and any number of groups
    or programmers), then the groups' names (one `$in`); only when a tie runs on from the page
    before, the sets where that tie starts as well. Equal scores share a rank (1, 2, 2, 4).
    Pages write the scores with one decimal, or as many more as the page needs for different
    scores to look different (ranks and scores agree: `GroupRow.score_text`)."""
    day = today() if day is None else day
    offset = (page - 1) * page_size
    found = leaderboard.group_page(board.slug, day_key(board, day), kind, offset, page_size)
    result = GroupPage(board, day, kind, found.total, page, page_size)
    result.rows = [_group_row(group, found.decimals) for group in found.ranked]
    return result


def group_standing(*, board: Board, scope: str, day: int | None = None) -> GroupRow | None:
    """Where one group (``country:BD``) stands on the ranklist of its kind on a board day (None:
    nobody of it is on the board): its histogram gives its record, and the groups ranked above
    it are those before its score in the ranklist (two reads, then three)."""
    day = today() if day is None else day
    group = leaderboard.group_standing(board.slug, day_key(board, day), scope)
    return None if group is None else _group_row(group)

"""Groups ranked against each other: a board day's ranklist of countries or organizations, and
where one group stands on it (see `leaderboard.groups` for how a group's score is kept)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field

from django_countries.fields import Country

from .. import leaderboard
from ..clock import today
from ..leaderboard import groups, orders, reading
from ..models import Board
from .common import PAGE_SIZE, Paged, day_key

GROUP_KINDS = groups.KINDS  # "country", "org"


@dataclass(frozen=True)
class GroupRow:
    """A country or an organization on a board day's ranklist of groups (see `groups`)."""

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
        return groups.score_shown(self.key)

    @property
    def score_text(self) -> str:
        """The score as its page writes it: with the decimals that tell the page's apart."""
        return groups.score_text(self.key, self.decimals)


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


def _group_rows(kind: str, ranked: list[groups.Ranked], ranks: list[int]) -> list[GroupRow]:
    """The rows of ranked groups, named from their ids (one `$in` read)."""
    scopes = orders.group_names_read({group.group_id for group in ranked})
    rows = []
    for group, rank in zip(ranked, ranks, strict=True):
        scope = scopes.get(group.group_id, f"{kind}:?")  # a name never stored: see `rebuild`
        rows.append(GroupRow(rank, kind, scope.split(":", 1)[1], group.key, group.members))
    return rows


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
    start = max(0, offset - 1)  # the group before the page tells whether a tie runs on into it

    def page_of(view: reading.OrderView) -> tuple[int, list[groups.Ranked], int]:
        ranked = [groups.Ranked.of(r) for r in view.records(start, offset + page_size - start)]
        before = ranked.pop(0) if offset and ranked else None
        first_rank = offset + 1
        if before is not None and ranked and before.key == ranked[0].key:
            first_rank = 1 + view.before(groups.probe(ranked[0].key))
        return sum(view.histogram.values()), ranked, first_rank

    total, ranked, first_rank = reading.order_read(
        board.slug, day_key(board, day), groups.ranklist_scope(kind), page_of
    )
    result = GroupPage(board, day, kind, total, page, page_size)
    if ranked:
        keys = [group.key for group in ranked]
        ranks = groups.shared_ranks(keys, first_rank, offset)
        decimals = groups.decimals_telling_apart(keys)
        rows = _group_rows(kind, ranked, ranks)
        result.rows = [dataclasses.replace(row, decimals=decimals) for row in rows]
    return result


def group_standing(*, board: Board, scope: str, day: int | None = None) -> GroupRow | None:
    """Where one group (``country:BD``) stands on the ranklist of its kind on a board day (None:
    nobody of it is on the board): its histogram gives its record, and the groups ranked above
    it are those before its score in the ranklist (two reads, then three)."""
    kind = groups.kind_of(scope)
    if kind is None:
        return None
    day = today() if day is None else day
    key = day_key(board, day)
    record = reading.group_record(board.slug, key, scope)
    if record is None:
        return None
    group = groups.Ranked.of(record)
    before = reading.records_before(
        board.slug, key, groups.ranklist_scope(kind), groups.probe(group.key)
    )
    return GroupRow(before + 1, kind, scope.split(":", 1)[1], group.key, group.members)

"""The engine's front door, its reads (see `front`): a page, a range of scores, the histogram,
a programmer's standing with neighbours, their place, the places of a few, a group page and a
group's standing. Each reads by `_id`, each document at most once a
request, at any size (`reading`), and answers with the plain dataclasses below.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from . import entries, groups, maths, orders, reading
from .encoding import Member, record_score

__all__ = [
    "EntryPlace",
    "EntryPlaces",
    "GroupPlace",
    "GroupRanking",
    "Member",
    "Neighbours",
    "OrderPage",
    "ScoresPage",
    "group_page",
    "group_standing",
    "histogram",
    "page",
    "places",
    "position",
    "score_range",
    "standing",
]


@dataclass(frozen=True)
class OrderPage:
    """Members of a board day in listing order, and the day's histogram ({score: programmers}),
    exact at their scores and at 1 (`maths.board_total`)."""

    histogram: dict[int, int]
    members: list[Member]


def page(board_slug: str, day_key: str, scope: str, offset: int, size: int) -> OrderPage:
    """`size` members of a board day (of the group `scope`; "" everybody) from 0-based `offset`:
    the root, a node a level, then the one or two sets holding them."""
    histogram, members = reading.order_page(board_slug, day_key, scope, offset, size)
    return OrderPage(histogram, members)


@dataclass(frozen=True)
class ScoresPage(OrderPage):
    """A page of the members scoring in a range: `total` of them, the first `above` + the
    page's offset into the order (`above`: those scoring more than the range)."""

    total: int
    above: int


def score_range(
    board_slug: str,
    day_key: str,
    scope: str,
    scores: tuple[int, int | None],
    offset: int,
    size: int,
) -> ScoresPage:
    """How many members of a board day score from `scores[0]` to `scores[1]` (no upper bound:
    None), and `size` of them from `offset` into the range: one read of the order, as a page."""
    low, high = scores
    edges = {low, *([] if high is None else [high + 1])}

    def ask(view: reading.OrderView) -> tuple[dict[int, int], int, list[bytes]]:
        histogram = view.histogram_at(edges)
        total = sum(
            n
            for score, n in histogram.items()
            if n > 0 and score >= low and (high is None or score <= high)
        )
        above = 0 if high is None else maths.at_or_above(histogram, high + 1)
        wanted = max(0, min(size, total - offset))
        records = view.records(above + offset, wanted) if wanted else []
        at = edges | reading.rank_thresholds(map(record_score, records))
        return view.histogram_at(at), total, records

    histogram, total, records = reading.order_read(board_slug, day_key, scope, ask)
    above = 0 if high is None else maths.at_or_above(histogram, high + 1)
    members = [Member.from_record(record) for record in records]
    return ScoresPage(histogram, members, total, above)


def histogram(
    board_slug: str, day_key: str, scope: str = "", at: Iterable[int] = (1,)
) -> dict[int, int]:
    """{score: programmers} of a board day, exact at the scores `at` (the root alone, unless it
    counts buckets and a score of `at` falls inside one)."""
    return reading.histogram_read(board_slug, day_key, scope, at=at)


@dataclass(frozen=True)
class Neighbours:
    """A member's place in the listing order (None: not listed, or not asked) and the members
    read around it, the first at place `first` (its own among them), with the day's histogram
    exact at their scores."""

    histogram: dict[int, int]
    position: int | None
    members: list[Member]
    first: int


@dataclass(frozen=True)
class EntryPlace:
    """Where a programmer's entry puts them on a board day: their `member` (None: not on it;
    `near.histogram` is then the day's, exact at 1), where the order lists them, and their
    sums of the coming days asked ({day: score})."""

    member: Member | None
    near: Neighbours
    forecast: dict[int, int]


def standing(
    board_slug: str,
    day_key: str,
    programmer_id: int,
    *,
    scope: str = "",
    listed: bool = True,
    places: bool = False,
    around: int = 0,
    ahead: Iterable[int] = (),
) -> EntryPlace:
    """A programmer on a board day: their entry (with the sums of the days `ahead`), then the
    day's order once: its histogram alone, or with `places` (ties broken, or neighbours wanted)
    their place and the `around` members above and below. `listed` False: the programmer is off
    the boards, whatever their entry says."""
    ahead = list(ahead)
    entry = entries.entry_read(board_slug, programmer_id, [day_key, *map(str, ahead)])
    forecast = {day: entries.entry_sum(entry, str(day)) for day in ahead}
    member = entries.entry_member(entry, day_key, scope) if listed else None
    if member is None:
        day_histogram = reading.histogram_read(board_slug, day_key, scope)
        return EntryPlace(None, Neighbours(day_histogram, None, [], 0), forecast)
    if not places:
        at = reading.rank_thresholds([record_score(member.record())])
        day_histogram = reading.histogram_read(board_slug, day_key, scope, at=at)
        return EntryPlace(member, Neighbours(day_histogram, None, [], 0), forecast)
    near = reading.order_read(
        board_slug, day_key, scope, lambda view: _neighbours(view, member.record(), around)
    )
    return EntryPlace(member, near, forecast)


def _neighbours(view: reading.OrderView, record: bytes, around: int) -> Neighbours:
    """The record's place in the order and the `around` members before and after it."""
    position = view.position(record)
    if position is None or around <= 0:
        at = reading.rank_thresholds([record_score(record)])
        return Neighbours(view.histogram_at(at), position, [], position or 0)
    first = max(0, position - around)
    records = view.records(first, position - first + 1 + around)
    at = reading.rank_thresholds(map(record_score, [record, *records]))
    members = [Member.from_record(r) for r in records]
    return Neighbours(view.histogram_at(at), position, members, first)


def position(
    board_slug: str, day_key: str, programmer_id: int, *, scope: str = "", listed: bool = True
) -> int | None:
    """A programmer's 0-based place in the listing order of a board day (None: not on it):
    their entry, then their place in the order."""
    entry = entries.entry_read(board_slug, programmer_id, [day_key])
    member = entries.entry_member(entry, day_key, scope) if listed else None
    if member is None:
        return None
    return reading.member_position(board_slug, day_key, scope, member)


@dataclass(frozen=True)
class EntryPlaces:
    """A few programmers on a board day: {programmer id: member} of those on it, their places
    when asked ({programmer id: place}), the neighbours of one of them when asked, and the
    day's histogram exact at every score read."""

    histogram: dict[int, int]
    members: dict[int, Member]
    positions: dict[int, int | None]
    near: Neighbours | None


def places(
    board_slug: str,
    day_key: str,
    programmer_ids: Iterable[int],
    *,
    scope: str = "",
    positions: bool = False,
    around_of: int | None = None,
    around: int = 4,
) -> EntryPlaces:
    """A few programmers on a board day: one `$in` read of their entries, then one read of the
    order (its root alone when neither `positions` nor anybody's neighbours are asked)."""
    ids = list(programmer_ids)
    members = entries.entries_members(board_slug, ids, day_key, scope) if ids else {}
    wanted = members.get(around_of) if around_of is not None else None
    if not positions and wanted is None:
        at = reading.rank_thresholds(member.score for member in members.values())
        return EntryPlaces(histogram(board_slug, day_key, scope, at=at), members, {}, None)

    def question(view: reading.OrderView) -> EntryPlaces:
        found = {pid: view.position(m.record()) for pid, m in members.items()} if positions else {}
        near = _neighbours(view, wanted.record(), around) if wanted else None
        seen = [member.score for member in members.values()]
        seen += [member.score for member in (near.members if near else [])]
        at = reading.rank_thresholds(seen)
        return EntryPlaces(view.histogram_at(at), members, found, near)

    return reading.order_read(board_slug, day_key, scope, question)


@dataclass(frozen=True)
class GroupPlace:
    """A group on a board day's ranklist of its kind: its rank, its scope (``country:BD``), its
    score key (`groups`: equal keys, equal scores) and its members on the board."""

    rank: int
    scope: str
    key: int
    members: int


@dataclass(frozen=True)
class GroupRanking:
    """A page of a board day's ranklist of groups: the groups ranked that day (`total`), the
    page's, and the decimals their scores need to look as different as they are."""

    total: int
    ranked: list[GroupPlace]
    decimals: int = 1


def group_page(board_slug: str, day_key: str, kind: str, offset: int, size: int) -> GroupRanking:
    """`size` groups of a kind (`groups.KINDS`) from `offset`, best first: the ranklist's order
    read as a page, from the group before it (when a tie runs on from the page before, the sets
    where it starts as well), then the groups' names (one `$in`). Equal scores share a rank."""
    start = max(0, offset - 1)  # the group before the page tells whether a tie runs on into it

    def page_of(view: reading.OrderView) -> tuple[int, list[groups.Ranked], int]:
        ranked = [groups.Ranked.of(r) for r in view.records(start, offset + size - start)]
        before = ranked.pop(0) if offset and ranked else None
        first_rank = offset + 1
        if before is not None and ranked and before.key == ranked[0].key:
            first_rank = 1 + view.before(groups.probe(ranked[0].key))
        return sum(view.histogram.values()), ranked, first_rank

    scope = groups.ranklist_scope(kind)
    total, ranked, first_rank = reading.order_read(board_slug, day_key, scope, page_of)
    if not ranked:
        return GroupRanking(total, [])
    keys = [group.key for group in ranked]
    ranks = groups.shared_ranks(keys, first_rank, offset)
    names = orders.group_names_read({group.group_id for group in ranked})
    found = [
        # A name never stored (see `rebuild`) shows as "?".
        GroupPlace(rank, names.get(group.group_id, f"{kind}:?"), group.key, group.members)
        for group, rank in zip(ranked, ranks, strict=True)
    ]
    return GroupRanking(total, found, groups.decimals_telling_apart(keys))


def group_standing(board_slug: str, day_key: str, scope: str) -> GroupPlace | None:
    """Where one group (``country:BD``) stands on the ranklist of its kind on a board day (None:
    not a group's scope, or nobody of it on the board): its record from its own order's
    histogram, then how many groups of the ranklist score better (two reads, then three)."""
    kind = groups.kind_of(scope)
    if kind is None:
        return None
    record = reading.group_record(board_slug, day_key, scope)
    if record is None:
        return None
    group = groups.Ranked.of(record)
    probe = groups.probe(group.key)
    before = reading.records_before(board_slug, day_key, groups.ranklist_scope(kind), probe)
    return GroupPlace(before + 1, scope, group.key, group.members)

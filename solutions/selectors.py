"""Reads: board pages, ranks, forecasts and profiles. Every rank in the product comes from here."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.cache import cache
from django.db import transaction
from django.db.models import QuerySet
from django.db.models.functions import Lower
from django_countries.fields import Country
from pymongo import DESCENDING

from . import cards, holds, leaderboard, mongo, solver_pages, solvers
from .clock import today
from .leaderboard import days_kept, entries, groups, orders, reading, sets, streaks
from .models import Board, Problem, Programmer, handle_key

PAGE_SIZE = 25
# Every page lists the visible boards (its tabs, its ETag), which change only when staff edit a
# board: they are kept in Django's cache, dropped on every save of a board. A process with a
# cache of its own (no REDIS_URL) sees another process's edit within this long.
BOARDS_CACHE_KEY = "boards-visible"
BOARDS_CACHE_SECONDS = 10


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


def boards_visible() -> QuerySet[Board]:
    return Board.objects.filter(visible=True)


def boards_visible_cached() -> list[Board]:
    """The visible boards, from Django's cache (see `BOARDS_CACHE_SECONDS`)."""
    boards = cache.get(BOARDS_CACHE_KEY)
    if boards is None:
        boards = list(boards_visible())
        cache.set(BOARDS_CACHE_KEY, boards, BOARDS_CACHE_SECONDS)
    return boards


def boards_forget(**_signal: object) -> None:
    """Drop the cached boards (on every save or delete of a board): now, for this request, and
    again once the edit is committed, so no other process keeps what it read just before."""
    cache.delete(BOARDS_CACHE_KEY)
    transaction.on_commit(lambda: cache.delete(BOARDS_CACHE_KEY))


def board_default() -> Board | None:
    return boards_visible().filter(is_default=True).first() or boards_visible().first()


def problems_published() -> QuerySet[Problem]:
    return Problem.objects.filter(published=True)


def day_key(board: Board, day: int) -> str:
    return entries.board_key(board.spec, day)


def _rank(histogram: dict[int, int], score: int, position: int | None) -> int:
    """A score's rank: shared by everybody with that score, or the place itself (`position`,
    from 0) on a board whose ties are broken."""
    return leaderboard.shared_rank(histogram, score) if position is None else position + 1


def _rows(
    board: Board, members: list[sets.Member], histogram: dict[int, int], first_offset: int
) -> list[Row]:
    """Board rows in listing order with their ranks: shared (from the histogram) or unique (by
    position)."""
    unique = board.ties == Board.UNIQUE
    return [
        Row(
            rank=_rank(histogram, member.score, first_offset + position if unique else None),
            handle=member.handle,
            score=member.score,
            programmer_id=member.programmer_id,
            at_or_above=leaderboard.at_or_above(histogram, member.score),
        )
        for position, member in enumerate(members)
    ]


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
    histogram, members = reading.order_page(
        board.slug, day_key(board, day), scope, offset, page_size
    )
    result = BoardPage(
        board=board,
        day=day,
        scope=scope,
        total=leaderboard.board_total(histogram),
        page=page,
        page_size=page_size,
    )
    result.rows = _rows(board, members, histogram, offset)
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

    edges = {min_score, *([] if max_score is None else [max_score + 1])}

    def ask(view: reading.OrderView) -> tuple[dict[int, int], int, list[bytes]]:
        histogram = view.histogram_at(edges)
        total = sum(
            n
            for score, n in histogram.items()
            if n > 0 and score >= min_score and (max_score is None or score <= max_score)
        )
        above = 0 if max_score is None else leaderboard.at_or_above(histogram, max_score + 1)
        skip = (page - 1) * page_size
        wanted = max(0, min(page_size, total - skip))
        records = view.records(above + skip, wanted) if wanted else []
        scores = map(sets.record_score, records)
        return view.histogram_at(edges | reading.rank_thresholds(scores)), total, records

    histogram, total, records = reading.order_read(board.slug, day_key(board, day), scope, ask)
    found = ScoreRange(
        board=board,
        day=day,
        scope=scope,
        min_score=min_score,
        max_score=max_score,
        total=total,
        page=page,
        page_size=page_size,
    )
    above = 0 if max_score is None else leaderboard.at_or_above(histogram, max_score + 1)
    members = [sets.Member.from_record(record) for record in records]
    found.rows = _rows(board, members, histogram, above + (page - 1) * page_size)
    return found


def board_at_or_above(*, board: Board, score: int, day: int | None = None, scope: str = "") -> int:
    """How many programmers of a board day score `score` or more: the day's histogram alone."""
    day = today() if day is None else day
    histogram = reading.histogram_read(board.slug, day_key(board, day), scope, at=[score])
    return leaderboard.at_or_above(histogram, score)


def programmer_by_handle(handle: str) -> Programmer | None:
    return Programmer.objects.handle_is(handle).first()


def programmer_profile_for(*, handle: str, viewer: User | AnonymousUser) -> Programmer | None:
    """The programmer whose profile and activity `viewer` may see under this handle (None: a
    404), see `Programmer.profile_shown_to`."""
    programmer = programmer_by_handle(handle)
    if programmer is None or not programmer.profile_shown_to(viewer):
        return None
    return programmer


def users_logging_in_as(handle: str) -> QuerySet[User]:
    """The users whose login name is `handle` in any case: an equality on LOWER(username), which
    the index of migration 0009 serves (``username__iexact`` is a scan of the users table)."""
    return User.objects.alias(key=Lower("username")).filter(key=handle.lower())


def user_logging_in_as(name: str) -> User | None:
    """The account a login names. A handle is a login name, and handles are unique without
    case (sign-up refuses a handle that is somebody's login name in any case), so any case of
    one names its account: the user with exactly this username, else the user of the programmer
    whose handle it is (`Programmer.objects.handle_is`), else the one user whose username it is
    in any case (staff without a programmer). Each is one indexed equality."""
    exact = User.objects.filter(username=name).first()
    if exact is not None:
        return exact
    programmer = Programmer.objects.handle_is(name).select_related("user").first()
    if programmer is not None and programmer.user is not None:
        return programmer.user
    found = list(users_logging_in_as(name)[:2])
    return found[0] if len(found) == 1 else None


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
    forecast_scores = [
        (leaderboard.day_to_date(d), entries.entry_sum(entry, str(d))) for d in ahead
    ]
    member = entries.entry_member(entry, key, scope) if programmer.on_boards else None
    if member is None:
        total = leaderboard.board_total(reading.histogram_read(board.slug, key, scope))
        standing = Standing(board, day, programmer.handle, rank=None, score=0, total=total)
        return Around(standing, forecast=forecast_scores)
    unique = board.ties == Board.UNIQUE
    histogram, position, records, first = _order_around(
        board, key, scope, member.record(), around, places=around > 0 or unique
    )
    standing = Standing(
        board=board,
        day=day,
        handle=programmer.handle,
        rank=_rank(histogram, member.score, position if unique else None),
        score=member.score,
        total=leaderboard.board_total(histogram),
        key=member.key,
        programmer_id=programmer.pk,
        at_or_above=leaderboard.at_or_above(histogram, member.score),
    )
    if position is None:
        return Around(standing, forecast=forecast_scores)
    above, below = _rows_around(board, histogram, position, records, first)
    return Around(standing, above, below, forecast_scores)


def _order_around(
    board: Board, key: str, scope: str, record: bytes, around: int, *, places: bool
) -> tuple[dict[int, int], int | None, list[bytes], int]:
    """The day's histogram and, with `places`, what `_neighbourhood` finds of `record` in one
    read of the order; without, the root's histogram alone (no place, no records)."""
    if not places:
        at = reading.rank_thresholds([sets.record_score(record)])
        return reading.histogram_read(board.slug, key, scope, at=at), None, [], 0
    return reading.order_read(
        board.slug, key, scope, lambda view: _neighbourhood(view, record, around)
    )


def _rows_around(
    board: Board, histogram: dict[int, int], position: int, records: list[bytes], first: int
) -> tuple[list[Row], list[Row]]:
    """The rows above and below the member at `position`, of the records read from `first`."""
    rows = _rows(board, [sets.Member.from_record(r) for r in records], histogram, first)
    own = position - first
    return rows[:own], rows[own + 1 :]


def _neighbourhood(
    view: reading.OrderView, record: bytes, around: int
) -> tuple[dict[int, int], int | None, list[bytes], int]:
    """(the histogram, exact at their scores, the record's place, the records from `first` to
    `around` past it, first)."""
    position = view.position(record)
    if position is None or around <= 0:
        at = reading.rank_thresholds([sets.record_score(record)])
        return view.histogram_at(at), position, [], position or 0
    first = max(0, position - around)
    records = view.records(first, position - first + 1 + around)
    at = reading.rank_thresholds(map(sets.record_score, [record, *records]))
    return view.histogram_at(at), position, records, first


def _forecast_days(board: Board, days: int) -> list[int]:
    """The coming days whose scores a forecast shows, at most the board's span (none on an
    all-time board)."""
    if board.spec.is_all_time or days <= 0:
        return []
    now_day = today()
    return [now_day + offset for offset in range(1, min(days, board.spec.span) + 1)]


def programmer_solved_problems(*, programmer: Programmer, held: bool = False) -> list[dict]:
    """The problems a programmer solved, newest first: the solves the boards count, and with
    `held` the held ones too (see `holds`: for staff, and for the programmer's own eyes)."""
    return list(
        mongo.solves()
        .find(
            {"programmer_id": programmer.pk, **({} if held else holds.SHOWN)},
            {"problem": 1, "solved_at": 1, holds.HELD_UNTIL: 1},
        )
        .sort("solved_at", DESCENDING)
    )


def programmer_submissions(*, programmer: Programmer, limit: int = 50) -> list[dict]:
    return list(
        mongo.submissions()
        .find({"programmer_id": programmer.pk}, {"answer": 0})
        .sort("submitted_at", DESCENDING)
        .limit(limit)
    )


def day_is_browsable(board: Board, day: int) -> bool:
    """Days whose board is kept: from the oldest kept final board to today (the days after are
    a programmer's forecast, read from their entry: see `programmer_around`)."""
    now_day = today()
    return days_kept.history_from(now_day) <= day <= now_day


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


# --- groups ranked against each other ----------------------------------------------------------

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


# --- search by the start of a handle -----------------------------------------------------------

HANDLE_MATCHES_MAX = 20  # matches listed at once, on the board page and in the API
# Matches are counted this far and no further ("at least 980 more"): a count that
# stops keeps a one-letter search as cheap at a million programmers as at a thousand.
HANDLE_MATCHES_COUNTED = 1000


def _prefix_end(prefix: str) -> str:
    """The first key after every key that starts with `prefix`: its last character, plus one."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def programmers_starting_with(*, prefix: str) -> QuerySet[Programmer]:
    """The programmers whose handle starts with `prefix` (a non-empty run of handle characters,
    any case), in handle order: a range of the handle key, which the unique index on it serves
    on SQLite and PostgreSQL. Hidden and banned programmers are left out, as the boards leave
    them out: staff hide them from the public, and a search is public."""
    low = prefix.lower()
    return (
        Programmer.objects.alias(key=handle_key())
        .filter(key__gte=low, key__lt=_prefix_end(low), hidden=False, banned=False)
        .order_by("key")
    )


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
    unique = board.ties == Board.UNIQUE
    wanted = members.get(around_of.pk) if around_of is not None else None
    if unique or wanted is not None:

        def question(view: reading.OrderView):
            positions = (
                {pid: view.position(m.record()) for pid, m in members.items()} if unique else {}
            )
            near = _neighbourhood(view, wanted.record(), around) if wanted else None
            seen = [member.score for member in members.values()]
            seen += map(sets.record_score, near[2] if near else [])
            return view.histogram_at(reading.rank_thresholds(seen)), positions, near

        histogram, positions, near = reading.order_read(board.slug, key, scope, question)
    else:
        at = reading.rank_thresholds(member.score for member in members.values())
        histogram, positions, near = reading.histogram_read(board.slug, key, scope, at=at), {}, None
    rows = {
        pid: Row(
            _rank(histogram, member.score, positions.get(pid)),
            on_boards[pid].handle,
            member.score,
            pid,
            leaderboard.at_or_above(histogram, member.score),
        )
        for pid, member in members.items()
    }
    total = leaderboard.board_total(histogram)
    if around_of is None:
        return Places(rows, total)
    row = rows.get(around_of.pk)
    if row is None or near is None:
        standing = Standing(board, day, around_of.handle, rank=None, score=0, total=total)
        return Places(rows, total, Around(standing))
    standing = Standing(
        board,
        day,
        row.handle,
        row.rank,
        row.score,
        total,
        wanted.key,
        row.programmer_id,
        row.at_or_above,
    )
    _histogram, position, records, first = near
    if position is None:
        return Places(rows, total, Around(standing))
    above, below = _rows_around(board, histogram, position, records, first)
    return Places(rows, total, Around(standing, above, below))


@dataclass(frozen=True)
class HandleMatch:
    """A programmer whose handle starts with what was searched, and their place on the board
    (rank None: not on it that day, or not in the group)."""

    programmer: Programmer
    rank: int | None
    score: int

    @property
    def handle(self) -> str:
        return self.programmer.handle


@dataclass(frozen=True)
class HandleMatches:
    """The answer to a search by the start of a handle on one board day."""

    board: Board
    day: int
    prefix: str
    total: int  # programmers on the board that day
    matches: list[HandleMatch]
    more: int  # matches past the list, counted up to HANDLE_MATCHES_COUNTED matches in all
    one: Around | None = None  # the one programmer searched for, with their neighbours

    @property
    def date(self) -> dt.date:
        return leaderboard.day_to_date(self.day)

    @property
    def count(self) -> int:
        """How many match (all of them when `count_is_exact`, else at least this many)."""
        return len(self.matches) + self.more

    @property
    def count_is_exact(self) -> bool:
        return self.count < HANDLE_MATCHES_COUNTED

    def named(self, handle: str) -> HandleMatch | None:
        """The match whose whole handle is `handle` (any case), if any: a handle comes before
        every longer one starting with it, so when it matches it is listed first."""
        return next((m for m in self.matches if m.handle.lower() == handle.lower()), None)


def programmers_search(
    *,
    board: Board,
    prefix: str,
    day: int | None = None,
    scope: str = "",
    limit: int = HANDLE_MATCHES_MAX,
    around: int = 0,
) -> HandleMatches:
    """The programmers whose handle starts with `prefix`, at most `limit` in handle order, each
    with their rank and score on a board day, and how many more match; with `around`, the one
    programmer it names (the only match, or a handle given in full) with that many programmers
    above and below. At any number of programmers: one SQL range read of the handle index (a
    second, counting at most HANDLE_MATCHES_COUNTED, only when the list is full) and the reads
    of `programmers_places`."""
    day = today() if day is None else day
    found = programmers_starting_with(prefix=prefix).only("handle", "hidden", "banned")
    listed = list(found[: limit + 1])
    more = 0
    if len(listed) > limit:
        listed = listed[:limit]
        more = found[:HANDLE_MATCHES_COUNTED].count() - limit
    named = [p for p in listed if p.handle.lower() == prefix.lower()]
    one = (named or (listed if len(listed) == 1 and not more else []))[:1]
    places = programmers_places(
        board=board,
        programmers=listed,
        day=day,
        scope=scope,
        around_of=one[0] if one and around else None,
        around=around,
    )
    matches = []
    for programmer in listed:
        row = places.rows.get(programmer.pk)
        matches.append(HandleMatch(programmer, row.rank if row else None, row.score if row else 0))
    return HandleMatches(board, day, prefix, places.total, matches, more, places.around)


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


@dataclass(frozen=True)
class BoardStanding:
    standing: Standing
    forecast: list[tuple[dt.date, int]]  # the coming week on rolling boards, for the table
    coming: list[tuple[dt.date, int]] = field(default_factory=list)  # to `forecast_horizon`


@dataclass(frozen=True)
class SolvedProblem:
    slug: str
    title: str
    published: bool
    solved_at: dt.datetime
    held_until: dt.datetime | None = None  # held off the public pages until then (staff see it)


@dataclass(frozen=True)
class Year:
    """A programmer's last year of solving (see `leaderboard.streaks` for the definitions)."""

    handle: str
    first_day: int
    last_day: int  # today
    days: dict[int, int]  # {epoch day: solves}, only the days of the year with solves
    current_streak: int
    longest_streak: int

    @property
    def solved(self) -> int:
        """Problems solved in the year (each solve in the log is a problem solved)."""
        return sum(self.days.values())

    @property
    def active_days(self) -> int:
        return len(self.days)

    @property
    def first_date(self) -> dt.date:
        return leaderboard.day_to_date(self.first_day)

    @property
    def last_date(self) -> dt.date:
        return leaderboard.day_to_date(self.last_day)

    def dated(self) -> dict[dt.date, int]:
        """{date: solves} of the days with solves, oldest first."""
        return {leaderboard.day_to_date(day): n for day, n in sorted(self.days.items())}


def programmer_year(*, programmer: Programmer, solves: list[dict] | None = None) -> Year:
    """The last 365 days of a programmer's solves up to today, with their current and longest
    streaks. From their own solves in the log (`solves`, when the caller read them already):
    one read by the log's unique key, whose first field is the programmer, so its cost is their
    history alone, never the number of programmers. The longest streak needs every solve day
    ever, which only the log keeps (the boards' entries drop days past their windows). Held
    solves are left out when it reads them (see `holds`)."""
    if solves is None:
        solves = list(
            mongo.solves().find({"programmer_id": programmer.pk, **holds.SHOWN}, {"solved_at": 1})
        )
    every_day = streaks.solve_days(
        (solve["solved_at"] for solve in solves), settings.LEADERBOARD_TIME_ZONE
    )
    now_day = today()
    first_day = streaks.year_first_day(now_day)
    return Year(
        handle=programmer.handle,
        first_day=first_day,
        last_day=now_day,
        days={day: n for day, n in every_day.items() if first_day <= day <= now_day},
        current_streak=streaks.current_streak(every_day, now_day),
        longest_streak=streaks.longest_streak(every_day),
    )


@dataclass(frozen=True)
class Profile:
    programmer: Programmer
    boards: list[BoardStanding]
    solved: list[SolvedProblem]
    year: Year


PROFILE_FORECAST_DAYS = 7
FORECAST_HORIZON_DAYS = 30


def forecast_horizon(board: Board) -> int:
    """How many coming days a forecast shows: up to FORECAST_HORIZON_DAYS on rolling boards (the
    last one is the day a quiet programmer drops off), to the end of the period on calendar
    boards, none on all-time boards (they never decay)."""
    window = board.spec
    if window.is_all_time:
        return 0
    if window.kind == leaderboard.ROLLING:
        return min(window.days, FORECAST_HORIZON_DAYS)
    now_day = today()
    return max(0, min(window.end(now_day) - now_day, FORECAST_HORIZON_DAYS))


def programmer_profile(*, programmer: Programmer, held: bool = False) -> Profile:
    """What the profile page shows: rank, score, total and percentile on every visible board
    (from the one rank selector), the coming week's forecast on rolling boards, the problems
    solved, newest first, and the year of solving (from the same read of their solves). Held
    solves (see `holds`) show in those two only with `held` (to staff), marked."""
    standings = []
    for board in boards_visible():
        days = forecast_horizon(board)
        found = programmer_around(board=board, programmer=programmer, around=0, forecast_days=days)
        table = found.forecast[:PROFILE_FORECAST_DAYS] if board.is_rolling else []
        standings.append(BoardStanding(found.standing, forecast=table, coming=found.forecast))
    solves = programmer_solved_problems(programmer=programmer, held=held)
    problems = Problem.objects.in_bulk([solve["problem"] for solve in solves], field_name="slug")
    solved = []
    for solve in solves:
        problem = problems.get(solve["problem"])
        solved.append(
            SolvedProblem(
                slug=solve["problem"],
                title=problem.title if problem else solve["problem"],
                published=bool(problem and problem.published),
                solved_at=solve["solved_at"],
                held_until=solve.get(holds.HELD_UNTIL),
            )
        )
    year = programmer_year(programmer=programmer, solves=solves)
    return Profile(programmer=programmer, boards=standings, solved=solved, year=year)


# --- problems and their solvers ----------------------------------------------------------------


@dataclass(frozen=True)
class ProblemRow:
    problem: Problem
    solvers: int


PROBLEM_ORDERS = ("title", "solvers")


def problems_with_solvers(*, order: str = "title") -> list[ProblemRow]:
    """The published problems with how many programmers on the boards solved each: by title, or
    (`order="solvers"`) most solved first, then by title. One SQL read and one `$in` read of the
    problems' counters (`solvers`): the cost of the problems, not of the programmers."""
    problems = list(problems_published().order_by("title", "slug"))
    counts = solvers.stats_read(slugs=[problem.slug for problem in problems])
    rows = [ProblemRow(p, counts[p.slug].solvers if p.slug in counts else 0) for p in problems]
    if order == "solvers":
        rows.sort(key=lambda row: -row.solvers)  # stable: ties stay in title order
    return rows


@dataclass(frozen=True)
class ProblemsPage(Paged):
    total: int
    page: int
    page_size: int
    rows: list[ProblemRow]


def problems_page(*, page: int = 1, page_size: int = PAGE_SIZE) -> ProblemsPage:
    """One page of the published problems in slug order, with their solver counts: a count,
    a slice and one `$in` read of the page's counters."""
    published = problems_published().order_by("slug")
    offset = (page - 1) * page_size
    problems = list(published[offset : offset + page_size])
    counts = solvers.stats_read(slugs=[problem.slug for problem in problems])
    rows = [ProblemRow(p, counts[p.slug].solvers if p.slug in counts else 0) for p in problems]
    return ProblemsPage(total=published.count(), page=page, page_size=page_size, rows=rows)


@dataclass(frozen=True)
class ProblemSolver:
    handle: str
    solved_at: dt.datetime


@dataclass(frozen=True)
class ProblemSolvers:
    """How many programmers on the boards solved a problem, its first solvers (earliest first)
    and its latest (latest first)."""

    count: int
    first: list[ProblemSolver]
    recent: list[ProblemSolver]


def problem_solvers(*, problem: Problem) -> ProblemSolvers:
    """A problem's solver count and lists: one `_id` read of its counter, then one SQL read of
    the programmers it names (at most 2 × SOLVERS_KEPT), leaving out whoever is hidden or banned
    now, as the boards do."""
    stats = solvers.stats_read(slugs=[problem.slug], lists=True).get(problem.slug)
    if stats is None:
        return ProblemSolvers(count=0, first=[], recent=[])
    named = {s.programmer_id for s in stats.first} | {s.programmer_id for s in stats.recent}
    visible = Programmer.objects.filter(pk__in=named, hidden=False, banned=False).only("handle")
    handles = {programmer.pk: programmer.handle for programmer in visible}

    def shown(listed: list[solvers.Solver]) -> list[ProblemSolver]:
        rows = [
            ProblemSolver(handles[s.programmer_id], s.at)
            for s in listed
            if s.programmer_id in handles
        ]
        return rows[: solvers.SOLVERS_SHOWN]

    return ProblemSolvers(count=stats.solvers, first=shown(stats.first), recent=shown(stats.recent))


# --- the profile card ----------------------------------------------------------------------------


def programmer_card(*, programmer: Programmer) -> cards.Card:
    """What the profile card shows: the rank and score on the default board today (the one rank
    selector), the current streak and the solves of the last 52 weeks, from the same read of
    their shown solves as the profile's year (held solves left out: the card is public)."""
    board = board_default()
    standing = programmer_standing(board=board, programmer=programmer) if board else None
    year = programmer_year(programmer=programmer)
    return cards.Card(
        handle=programmer.handle,
        country_code=programmer.country.code or "",
        country_name=str(programmer.country.name or ""),
        board_title=board.title if board else "",
        rank=standing.rank if standing else None,
        score=standing.score if standing else 0,
        total=standing.total if standing else 0,
        current_streak=year.current_streak,
        weeks=cards.weeks_of(year.days, year.last_day),
        today=year.last_date,
    )


@dataclass(frozen=True)
class SolverRow:
    number: int  # 1 for the first solver
    handle: str
    country: str  # ISO 3166 code, "" when not given
    solved_at: dt.datetime


@dataclass(frozen=True)
class SolversPage(Paged):
    total: int
    page: int
    page_size: int
    rows: list[SolverRow]


def problem_solvers_page(
    *, problem: Problem, page: int, page_size: int = solvers.SOLVERS_PAGE
) -> SolversPage:
    """Page `page` of everybody who solved a problem, in solve order (earliest first, then by
    programmer id): its day counts, the indexes of the days and the chunks of the minutes that
    hold the page (`solver_pages.solvers_page`, four `_id` reads at most) and one SQL read of the
    page's programmers, whatever the number of solvers. Hidden and banned programmers are out of
    the chunks as they are out of the count; one whose move out is under way is left out here
    too."""
    found = solver_pages.solvers_page(
        slug=problem.slug, offset=(page - 1) * page_size, limit=page_size
    )
    ids = [solver.programmer_id for solver in found.solvers]
    visible = Programmer.objects.filter(pk__in=ids, hidden=False, banned=False)
    by_id = {programmer.pk: programmer for programmer in visible.only("handle", "country")}
    rows = [
        SolverRow(
            number=found.offset + index + 1,
            handle=by_id[solver.programmer_id].handle,
            country=str(by_id[solver.programmer_id].country),
            solved_at=solver.at,
        )
        for index, solver in enumerate(found.solvers)
        if solver.programmer_id in by_id
    ]
    return SolversPage(total=found.total, page=page, page_size=page_size, rows=rows)

"""Reads: board pages, ranks, forecasts and profiles. Every rank in the product comes from here."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field

from django.db.models import QuerySet
from pymongo import ASCENDING, DESCENDING

from . import entries, leaderboard, mongo
from .models import Board, Problem, Programmer
from .services import today

PAGE_SIZE = 25


@dataclass(frozen=True)
class Row:
    rank: int
    handle: str
    score: int
    programmer_id: int


@dataclass
class BoardPage:
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

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.page_size))


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

    @property
    def percentile(self) -> float | None:
        return leaderboard.percentile(self.rank, self.total) if self.rank else None


def boards_visible() -> QuerySet[Board]:
    return Board.objects.filter(visible=True)


def board_default() -> Board | None:
    return boards_visible().filter(is_default=True).first() or boards_visible().first()


def problems_published() -> QuerySet[Problem]:
    return Problem.objects.filter(published=True)


def day_key(board: Board, day: int) -> str:
    return entries.board_key(board.spec, day)


def _rows(
    board: Board, documents: list[dict], histogram: dict[int, int], first_offset: int, key_field
) -> list[Row]:
    """Board rows with their ranks: shared (from the histogram) or unique (by position)."""
    rows = []
    ordered = sorted(documents, key=lambda doc: (-key_field(doc), doc["handle"].lower()))
    for position, doc in enumerate(ordered):
        score = leaderboard.key_score(key_field(doc))
        if board.ties == Board.UNIQUE:
            rank = first_offset + position + 1
        else:
            rank = leaderboard.shared_rank(histogram, score)
        rows.append(Row(rank=rank, handle=doc["handle"], score=score, programmer_id=doc["pid"]))
    return rows


def board_page(
    *,
    board: Board,
    day: int | None = None,
    page: int = 1,
    page_size: int = PAGE_SIZE,
    scope: str = "",
) -> BoardPage:
    """One page of a board day: the first from the cached top page, later ones by a range query
    on `keys.D` that starts at the score the histogram says the page begins with."""
    day = today() if day is None else day
    key = day_key(board, day)
    histogram = entries.histogram_read(board.slug, key, scope)
    result = BoardPage(
        board=board,
        day=day,
        scope=scope,
        total=leaderboard.board_total(histogram),
        page=page,
        page_size=page_size,
    )
    offset = (page - 1) * page_size
    if offset >= result.total:
        return result
    # Solves keep cached top pages current up to today; a forecast day is queried each time.
    if offset + page_size <= entries.TOP_SIZE and day <= today():
        documents = entries.top_rows(board.slug, key, scope)[offset : offset + page_size]
    else:
        documents = _documents_from(board, key, scope, histogram, offset, page_size)
    result.rows = _rows(board, documents, histogram, offset, key_field=lambda doc: doc["key"])
    return result


def _documents_from(
    board: Board, key: str, scope: str, histogram: dict[int, int], offset: int, limit: int
) -> list[dict]:
    """`limit` entries from `offset`: a keyset range below the page's first score, so the index
    skips everybody with a better score and only the page's own tie group is stepped over."""
    score, above = leaderboard.score_at_offset(histogram, offset)
    field_name = f"keys.{key}"
    collection = mongo.entries(board.slug)
    projection = {"handle": 1, field_name: 1}
    scope_query = entries.scope_filter(scope)
    ceiling = leaderboard.score_floor_key(score + 1)
    page = list(
        collection.find({field_name: {"$gt": 0, "$lt": ceiling}, **scope_query}, projection)
        .sort(field_name, DESCENDING)
        .skip(offset - above)
        .limit(limit)
    )
    if page:
        page = _edges_by_handle(page, key, collection, projection, scope_query, offset - above)
    return [{"pid": doc["_id"], "handle": doc["handle"], "key": doc["keys"][key]} for doc in page]


def _edges_by_handle(
    page: list[dict], key: str, collection, projection: dict, scope_query: dict, skipped: int
) -> list[dict]:
    """The page with the right members of the tie groups its edges cut through.

    The index orders entries with equal keys (same score, reached the same second) arbitrarily,
    but the board lists them by handle. Such a group at the top of the page ends on it, so the page
    holds its last members by handle; one at the bottom starts on it, so the page holds its first.
    Only a page that lies wholly inside one group needs to count how much of it came before.
    """
    field_name = f"keys.{key}"
    first, last = page[0]["keys"][key], page[-1]["keys"][key]

    def group(edge: int) -> list[dict]:
        members = collection.find({field_name: edge, **scope_query}, projection)
        return sorted(members, key=lambda doc: doc["handle"].lower())

    if first == last:
        ahead = collection.count_documents(
            {
                field_name: {
                    "$gt": first,
                    "$lt": leaderboard.score_floor_key(leaderboard.key_score(first) + 1),
                },
                **scope_query,
            }
        )
        start = skipped - ahead
        return group(first)[start : start + len(page)]
    on_page_first = sum(1 for doc in page if doc["keys"][key] == first)
    on_page_last = sum(1 for doc in page if doc["keys"][key] == last)
    middle = [doc for doc in page if doc["keys"][key] not in (first, last)]
    return group(first)[-on_page_first:] + middle + group(last)[:on_page_last]


def programmer_by_handle(handle: str) -> Programmer | None:
    return Programmer.objects.filter(handle__iexact=handle).first()


def programmer_standing(
    *, board: Board, programmer: Programmer, day: int | None = None, scope: str = ""
) -> Standing:
    """The programmer's rank and score on a board day: the entry plus the day's histogram, two
    small reads whatever the size of the board (unique ranks add a count inside the tie)."""
    day = today() if day is None else day
    key = day_key(board, day)
    histogram = entries.histogram_read(board.slug, key, scope)
    total = leaderboard.board_total(histogram)
    entry = mongo.entries(board.slug).find_one(
        {"_id": programmer.pk, **entries.scope_filter(scope)}, {f"keys.{key}": 1}
    )
    sort_key = (entry or {}).get("keys", {}).get(key, 0)
    score = leaderboard.key_score(sort_key)
    if score <= 0 or not programmer.on_boards:
        return Standing(
            board=board, day=day, handle=programmer.handle, rank=None, score=0, total=total
        )
    rank = leaderboard.shared_rank(histogram, score)
    if board.ties == Board.UNIQUE:
        rank += _ahead_in_tie(board, key, scope, programmer, sort_key)
    return Standing(
        board=board,
        day=day,
        handle=programmer.handle,
        rank=rank,
        score=score,
        total=total,
        key=sort_key,
    )


def _ahead_in_tie(board: Board, key: str, scope: str, programmer: Programmer, sort_key: int) -> int:
    """How many with the same score are listed before this programmer (earlier, or same time and
    an earlier handle)."""
    field_name = f"keys.{key}"
    collection = mongo.entries(board.slug)
    score_ceiling = leaderboard.score_floor_key(leaderboard.key_score(sort_key) + 1)
    earlier = collection.count_documents(
        {field_name: {"$gt": sort_key, "$lt": score_ceiling}, **entries.scope_filter(scope)}
    )
    same_time = collection.find(
        {field_name: sort_key, **entries.scope_filter(scope)}, {"handle": 1}
    )
    return earlier + sum(
        1 for doc in same_time if doc["handle"].lower() < programmer.handle.lower()
    )


def programmer_neighbours(
    *, board: Board, standing: Standing, around: int, scope: str = ""
) -> tuple[list[Row], list[Row]]:
    """The `around` programmers just above and just below a standing (keyset range queries)."""
    if standing.rank is None or around <= 0:
        return [], []
    key = day_key(board, standing.day)
    field_name = f"keys.{key}"
    collection = mongo.entries(board.slug)
    projection = {"handle": 1, field_name: 1}
    scope_query = entries.scope_filter(scope)

    def nearest(key_range: dict, direction: int) -> list[dict]:
        """The `around` nearest keys in one direction, plus everybody sharing the farthest key
        (the index orders equal keys arbitrarily; the handle decides who is nearer)."""
        found = list(
            collection.find({field_name: key_range, **scope_query}, projection)
            .sort(field_name, direction)
            .limit(around)
        )
        if len(found) < around:
            return found
        edge = found[-1]["keys"][key]
        return [doc for doc in found if doc["keys"][key] != edge] + list(
            collection.find({field_name: edge, **scope_query}, projection)
        )

    # Programmers with exactly the same key (same score, reached the same second) are listed by
    # handle around this one.
    own = standing.handle.lower()
    same = list(collection.find({field_name: standing.key, **scope_query}, projection))

    def place(doc: dict) -> tuple[int, str]:
        return -doc["keys"][key], doc["handle"].lower()

    above = sorted(
        nearest({"$gt": standing.key}, ASCENDING)
        + [doc for doc in same if doc["handle"].lower() < own],
        key=place,
    )[-around:]
    below = sorted(
        nearest({"$gt": 0, "$lt": standing.key}, DESCENDING)
        + [doc for doc in same if doc["handle"].lower() > own],
        key=place,
    )[:around]
    histogram = entries.histogram_read(board.slug, key, scope)

    def to_rows(documents: list[dict], first_offset: int) -> list[Row]:
        shaped = [
            {"pid": d["_id"], "handle": d["handle"], "key": d["keys"][key]} for d in documents
        ]
        return _rows(board, shaped, histogram, first_offset, key_field=lambda doc: doc["key"])

    above_rows = to_rows(above, standing.rank - 1 - len(above))
    below_rows = to_rows(below, standing.rank)
    return above_rows, below_rows


def programmer_forecast(
    *, board: Board, programmer: Programmer, days: int | None = None
) -> list[tuple[dt.date, int]]:
    """The scores of the coming days if the programmer solves nothing more (rolling and calendar
    boards: straight from the forward-dated sums)."""
    if board.spec.is_all_time:
        return []
    now_day = today()
    horizon = days or board.spec.span
    wanted = [now_day + offset for offset in range(1, horizon + 1)]
    entry = (
        mongo.entries(board.slug).find_one({"_id": programmer.pk}, {f"sums.{d}": 1 for d in wanted})
        or {}
    )
    sums = entry.get("sums", {})
    return [(leaderboard.day_to_date(d), sums.get(str(d), 0)) for d in wanted]


def programmer_solved_problems(*, programmer: Programmer) -> list[dict]:
    """The problems a programmer solved, newest first."""
    return list(
        mongo.solves()
        .find({"programmer_id": programmer.pk}, {"problem": 1, "solved_at": 1})
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
    """Days whose board is kept: from the oldest kept final board to the end of the forecast."""
    now_day = today()
    return entries.history_from(now_day) <= day <= now_day + max(board.spec.span, 1)


def programmer_position(
    *, board: Board, programmer: Programmer, day: int | None = None, scope: str = ""
) -> int | None:
    """The programmer's 1-based place in the listed order of a board day (which page holds
    them), None when not on it. With shared ranks several programmers hold one rank, so the
    place is the rank plus those listed before them inside the tie."""
    standing = programmer_standing(board=board, programmer=programmer, day=day, scope=scope)
    if standing.rank is None:
        return None
    if board.ties == Board.UNIQUE:
        return standing.rank  # already counts those ahead inside the tie
    key = day_key(board, standing.day)
    return standing.rank + _ahead_in_tie(board, key, scope, programmer, standing.key)


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
    forecast: list[tuple[dt.date, int]]


@dataclass(frozen=True)
class SolvedProblem:
    slug: str
    title: str
    published: bool
    solved_at: dt.datetime


@dataclass(frozen=True)
class Profile:
    programmer: Programmer
    boards: list[BoardStanding]
    solved: list[SolvedProblem]


PROFILE_FORECAST_DAYS = 7


def programmer_profile(*, programmer: Programmer) -> Profile:
    """What the profile page shows: rank, score, total and percentile on every visible board
    (from the one rank selector), the coming week's forecast on rolling boards, and the problems
    solved, newest first."""
    standings = []
    for board in boards_visible():
        forecast = (
            programmer_forecast(
                board=board,
                programmer=programmer,
                days=min(board.spec.span, PROFILE_FORECAST_DAYS),
            )
            if board.is_rolling and programmer.on_boards
            else []
        )
        standing = programmer_standing(board=board, programmer=programmer)
        standings.append(BoardStanding(standing=standing, forecast=forecast))
    solves = programmer_solved_problems(programmer=programmer)
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
            )
        )
    return Profile(programmer=programmer, boards=standings, solved=solved)

"""A programmer's own pages: whose profile a viewer may see, the profile (their standing on every
visible board with its forecast, the problems solved, the year of solving), their submissions,
and the profile card. Held solves (see `holds`) show only to staff and to the programmer."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from pymongo import DESCENDING

from .. import cards, holds, leaderboard, mongo
from ..clock import today
from ..models import Board, Problem, Programmer
from .boards import board_default, boards_visible
from .common import Standing
from .search import programmer_by_handle
from .standings import programmer_around, programmer_standing

PROFILE_FORECAST_DAYS = 7
FORECAST_HORIZON_DAYS = 30


def programmer_profile_for(*, handle: str, viewer: User | AnonymousUser) -> Programmer | None:
    """The programmer whose profile and activity `viewer` may see under this handle (None: a
    404), see `Programmer.profile_shown_to`."""
    programmer = programmer_by_handle(handle)
    if programmer is None or not programmer.profile_shown_to(viewer):
        return None
    return programmer


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
    """A programmer's last year of solving (see the engine's `streaks` for the definitions)."""

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
    every_day = leaderboard.solve_days(
        (solve["solved_at"] for solve in solves), settings.LEADERBOARD_TIME_ZONE
    )
    now_day = today()
    first_day = leaderboard.year_first_day(now_day)
    return Year(
        handle=programmer.handle,
        first_day=first_day,
        last_day=now_day,
        days={day: n for day, n in every_day.items() if first_day <= day <= now_day},
        current_streak=leaderboard.current_streak(every_day, now_day),
        longest_streak=leaderboard.longest_streak(every_day),
    )


@dataclass(frozen=True)
class Profile:
    programmer: Programmer
    boards: list[BoardStanding]
    solved: list[SolvedProblem]
    year: Year


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

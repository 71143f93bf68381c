"""Reads: places for many programmers at once, arrows, rank history, forecasts, the following
view, follows and notifications.

Ranks come from the engine's rank data exactly as `solutions.selectors.programmer_standing`
computes them (the same histogram, the same shared-rank rule; unique ranks call it directly), so
an arrow, a chart point and the profile agree with the board.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Max, QuerySet
from pymongo import DESCENDING

from solutions import leaderboard, selectors
from solutions.clock import today
from solutions.models import Board, Programmer

from . import charts, mongo
from .models import AlertPreferences, AlertRule, Follow

CHART_DAYS = 30


@dataclass(frozen=True)
class Place:
    rank: int
    score: int


def places_of(
    *, board: Board, day: int, programmers: Iterable[Programmer], scope: str = ""
) -> dict[int, Place]:
    """{programmer id: Place} on a board day for those on it (`selectors.programmers_places`)."""
    found = selectors.programmers_places(
        board=board, programmers=list(programmers), day=day, scope=scope
    )
    return {pid: Place(row.rank, row.score) for pid, row in found.rows.items()}


# --- arrows ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MovedRow:
    """A board row with the places it moved since the previous day (positive is up; None: new
    on the board; no arrow at all when there is no previous day to compare with)."""

    row: selectors.Row
    moved: int | None
    compared: bool = True

    @property
    def direction(self) -> str:
        if not self.compared:
            return ""
        if self.moved is None:
            return "new"
        return "up" if self.moved > 0 else "down" if self.moved < 0 else "same"

    @property
    def places(self) -> int:
        return abs(self.moved or 0)

    # The row's own fields, so a MovedRow renders wherever a Row does.
    @property
    def rank(self) -> int:
        return self.row.rank

    @property
    def handle(self) -> str:
        return self.row.handle

    @property
    def score(self) -> int:
        return self.row.score

    @property
    def programmer_id(self) -> int:
        return self.row.programmer_id

    @property
    def at_or_above(self) -> int:
        return self.row.at_or_above


def previous_day_comparable(board: Board, day: int) -> bool:
    """Whether the day before has a board to compare with: kept, and (calendar boards) in the
    same period, so the first day of a month does not show everybody falling."""
    if day - 1 < leaderboard.history_from(today()):
        return False
    if board.window in (leaderboard.WEEK, leaderboard.MONTH):
        return board.spec.start(day) < day
    return True


def previous_ranks(
    *,
    board: Board,
    day: int,
    rows: list[selectors.Row],
    scope: str = "",
    programmers: Mapping[int, Programmer] | None = None,
):
    """{programmer id: rank} on the day before `day`, for these rows (None when not comparable).

    Rolling and calendar boards read it from the engine (the previous day's sums are its final
    board); all-time boards have one running total, so their previous day comes from the
    recorded history (the day's last snapshot). `programmers`: those of the rows, when read
    already."""
    if not rows or not previous_day_comparable(board, day):
        return None
    if board.spec.is_all_time:
        if scope:
            return None
        ids = [history_id(board.slug, row.programmer_id, day - 1) for row in rows]
        return {
            doc["programmer_id"]: doc["rank"]
            for doc in mongo.rank_history().find(
                {"_id": {"$in": ids}}, {"programmer_id": 1, "rank": 1}
            )
        }
    if programmers is None:
        programmers = Programmer.objects.in_bulk([row.programmer_id for row in rows])
    places = places_of(board=board, day=day - 1, programmers=programmers.values(), scope=scope)
    return {pid: place.rank for pid, place in places.items()}


def board_moves(page: selectors.BoardPage, rows: list | None = None) -> list[MovedRow]:
    """The page's rows (or `rows`, the same rows already decorated) with their arrows: places
    moved since the previous day's final board."""
    rows = page.rows if rows is None else rows
    before = previous_ranks(
        board=page.board, day=page.day, rows=rows, scope=page.scope, programmers=page.programmers
    )
    if before is None:
        return [MovedRow(row, 0, compared=False) for row in rows]
    return [
        MovedRow(row, before[row.programmer_id] - row.rank if row.programmer_id in before else None)
        for row in rows
    ]


# --- the following view ----------------------------------------------------------------------


def follows_of(*, user: AbstractBaseUser) -> QuerySet[Follow]:
    return Follow.objects.filter(follower=user).select_related("followed")


def follows_fingerprint(*, user: AbstractBaseUser) -> tuple[int, int | None]:
    """Changes whenever the user follows or unfollows somebody (for ETags)."""
    if not user.is_authenticated:
        return (0, None)
    found = Follow.objects.filter(follower=user).aggregate(n=Count("id"), last=Max("id"))
    return (found["n"], found["last"])


def following_ids(*, user: AbstractBaseUser) -> set[int]:
    """The programmer ids of the people the user follows and of the user's own programmer."""
    ids = set(Follow.objects.filter(follower=user).values_list("followed_id", flat=True))
    ids.update(Programmer.objects.filter(user=user).values_list("pk", flat=True))
    return ids


def is_following(*, user: AbstractBaseUser, programmer: Programmer) -> bool:
    return (
        user.is_authenticated and Follow.objects.filter(follower=user, followed=programmer).exists()
    )


def followers_count(*, programmer: Programmer) -> int:
    return Follow.objects.filter(followed=programmer).count()


def following_rows(
    *, board: Board, user: AbstractBaseUser, day: int | None = None
) -> list[selectors.Row]:
    """The people the user follows, and the user, ranked by their global rank on a board day.
    Those not on the board that day are left out."""
    day = today() if day is None else day
    people = [follow.followed for follow in follows_of(user=user)]
    me = getattr(user, "programmer", None)
    if me is not None and all(p.pk != me.pk for p in people):
        people.append(me)
    places = places_of(board=board, day=day, programmers=people)
    rows = [
        selectors.Row(
            rank=places[p.pk].rank, handle=p.handle, score=places[p.pk].score, programmer_id=p.pk
        )
        for p in people
        if p.pk in places
    ]
    return sorted(rows, key=lambda row: (row.rank, row.handle.lower()))


# --- rank history and the forecast -----------------------------------------------------------


def history_id(board_slug: str, programmer_id: int, day: int) -> str:
    return f"{board_slug}:{programmer_id}:{day}"


def rank_history(
    *,
    board: Board,
    programmer: Programmer,
    days: int = CHART_DAYS,
    standing: selectors.Standing | None = None,
) -> list[tuple[dt.date, int | None]]:
    """The programmer's rank on each of the last `days` days, today last (None: not on the
    board, or not recorded). Past days come from the recorded history (one read by `_id`),
    today from the live standing (`standing`, when the caller read it already)."""
    now_day = today()
    past = range(now_day - days + 1, now_day)
    ids = [history_id(board.slug, programmer.pk, day) for day in past]
    recorded = {
        doc["day"]: doc["rank"]
        for doc in mongo.rank_history().find({"_id": {"$in": ids}}, {"day": 1, "rank": 1})
    }
    points = [(leaderboard.day_to_date(day), recorded.get(day)) for day in past]
    if standing is None:
        standing = selectors.programmer_standing(board=board, programmer=programmer, day=now_day)
    points.append((leaderboard.day_to_date(now_day), standing.rank))
    return points


def forecast_points(*, board: Board, programmer: Programmer) -> list[tuple[dt.date, int]]:
    """Today's score, then the score of each coming day if the programmer solves nothing more,
    to `selectors.forecast_horizon` (nothing on all-time boards: they never decay)."""
    if board.spec.is_all_time or not programmer.on_boards:
        return []
    found = selectors.programmer_around(
        board=board,
        programmer=programmer,
        around=0,
        forecast_days=selectors.forecast_horizon(board),
    )
    return _forecast_line(found.standing, found.forecast)


def _forecast_line(
    standing: selectors.Standing, coming: list[tuple[dt.date, int]]
) -> list[tuple[dt.date, int]]:
    return [(leaderboard.day_to_date(standing.day), standing.score), *coming]


# --- alerts and notifications ----------------------------------------------------------------


def alert_preferences_of(*, user: AbstractBaseUser) -> AlertPreferences:
    """The user's alert choices (everything off when never saved)."""
    return AlertPreferences.objects.filter(user=user).first() or AlertPreferences(user=user)


def alert_rules_enabled() -> QuerySet[AlertRule]:
    return AlertRule.objects.filter(enabled=True).select_related("board")


def board_rules() -> list[tuple[Board, AlertRule | None]]:
    """Each visible board with its enabled alert rule (None: no alerts on it)."""
    rules = {rule.board_id: rule for rule in alert_rules_enabled()}
    return [(board, rules.get(board.pk)) for board in selectors.boards_visible()]


def notifications_unread_count(*, user: AbstractBaseUser) -> int:
    if not user.is_authenticated:
        return 0
    return mongo.notifications().count_documents({"user_id": user.pk, "read": False})


def notifications_recent(*, user: AbstractBaseUser, limit: int = 50) -> list[dict]:
    """The user's newest notifications, each with its `text`."""
    found = (
        mongo.notifications().find({"user_id": user.pk}).sort("created_at", DESCENDING).limit(limit)
    )
    return [{**doc, "text": notification_text(doc)} for doc in found]


def notification_subject(doc: dict) -> str:
    """A rank-drop notification in a few words (the email's subject)."""
    who = "You" if doc.get("own") else doc["handle"]
    places = doc["to_rank"] - doc["from_rank"]
    return f"{who} dropped {places} place{'s' if places != 1 else ''} on {doc['board_title']}"


def notification_text(doc: dict) -> str:
    """What a rank-drop notification says (the page, and the email's first line)."""
    return (
        f"{notification_subject(doc)}: from #{doc['from_rank']} to #{doc['to_rank']} "
        f"within {doc['minutes']} minutes."
    )


# --- the profile's charts --------------------------------------------------------------------


@dataclass(frozen=True)
class BoardCharts:
    board: Board
    rank: str  # SVG
    forecast: str  # SVG, empty on all-time boards


def profile_charts(*, profile: selectors.Profile) -> list[BoardCharts]:
    """For each board of a profile: rank over the last `CHART_DAYS` days, and the forecast, from
    the standings and forecasts the profile read (each document once a request)."""
    result = []
    programmer = profile.programmer
    for item in profile.boards:
        board = item.standing.board
        history = rank_history(board=board, programmer=programmer, standing=item.standing)
        decays = not board.spec.is_all_time and programmer.on_boards
        forecast = _forecast_line(item.standing, item.coming) if decays else []
        result.append(
            BoardCharts(
                board=board,
                rank=charts.rank_chart(
                    history,
                    chart_id=f"rank-{board.slug}",
                    title=f"{programmer.handle}'s rank on {board.title}, last {CHART_DAYS} days",
                ),
                forecast=charts.forecast_chart(
                    forecast,
                    chart_id=f"forecast-{board.slug}",
                    title=f"{programmer.handle}'s score on {board.title} if nothing more is solved",
                ),
            )
        )
    return result

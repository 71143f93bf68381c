"""The board endpoints' queries and answers: the list of boards, a page of a board day, a score
range, a programmer's standing, the handle search and the groups ranked against each other."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)

from ...models import MAX_SCORE, Board
from ...rules import (
    COUNTRY_PATTERN,
    HANDLE_PATTERN,
    ORGANIZATION_MAX_LENGTH,
    Scope,
    country_unknown,
)
from ...selectors import HANDLE_MATCHES_COUNTED, HANDLE_MATCHES_MAX, PAGE_SIZE
from .fields import MAX_AROUND, MAX_PAGE, MAX_PAGE_SIZE, PRINTABLE_PATTERN, iso_date, optional

WindowKind = Literal[tuple(value for value, _ in Board.WINDOW_CHOICES)]  # type: ignore[misc]
MetricKind = Literal[tuple(value for value, _ in Board.METRIC_CHOICES)]  # type: ignore[misc]
TiesKind = Literal[tuple(value for value, _ in Board.TIES_CHOICES)]  # type: ignore[misc]


class BoardQuery(BaseModel):
    """The query of the board endpoints; `country` or `org` shows a group's view. Every
    parameter is checked on every board endpoint, whether it uses it or not."""

    model_config = ConfigDict(extra="ignore")

    date: Annotated[
        dt.date, BeforeValidator(iso_date), WithJsonSchema({"type": "string", "format": "date"})
    ] = optional(
        "YYYY-MM-DD in the leaderboard time zone; today when absent. Kept: the last "
        "LEADERBOARD_HISTORY_DAYS days up to the end of the forecast (all-time boards: today)."
    )
    page: int = Field(default=1, ge=1, le=MAX_PAGE, description="Board pages: which page")
    page_size: int = Field(
        default=PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE, description="Board pages: rows per page"
    )
    around: int = Field(
        default=4, ge=0, le=MAX_AROUND, description="Standings: how many to list above and below"
    )
    country: str = optional(
        "Only programmers of this country (ISO 3166 code)", pattern=COUNTRY_PATTERN
    )
    org: str = optional(
        "Only programmers of this organization (not with country)",
        min_length=1,
        max_length=ORGANIZATION_MAX_LENGTH,
        pattern=PRINTABLE_PATTERN,
    )

    @field_validator("country")
    @classmethod
    def known_country(cls, country: str) -> str:
        if refusal := country_unknown(country):
            raise ValueError(refusal)
        return country

    @field_validator("org")
    @classmethod
    def not_with_country(cls, org: str, info: ValidationInfo) -> str:
        Scope.of(country=info.data.get("country") or "", org=org)  # ValueError for both
        return org

    @property
    def scope(self) -> str:
        return str(Scope.of(country=self.country or "", org=self.org or ""))


class ScoreRangeQuery(BoardQuery):
    """A board day's score range: `min` to `max` (both included; no upper bound without `max`)."""

    min: int = Field(
        ge=1,
        le=MAX_SCORE,
        description="The lowest score counted (at least 1)",
        json_schema_extra={"example": 1},
    )
    max: int = optional("The highest score counted (at least `min`)", ge=1, le=MAX_SCORE)

    @field_validator("max")
    @classmethod
    def not_below_min(cls, high: int | None, info: ValidationInfo) -> int | None:
        low = info.data.get("min")
        if high is not None and low is not None and high < low:
            raise ValueError("max must not be below min")
        return high


class MeQuery(BoardQuery):
    board: str = optional("A board's slug; the default board when absent")


METRIC_DESCRIPTION = (
    "What a score is. `solved`: the problems solved in the window (the first accepted solve of "
    "each counts). `points`: the sum of their points. `streak`: on a `rolling` board, the current "
    "streak on the day: the number of consecutive solve days ending that day, or ending the day "
    "before when the day is not a solve day (a streak stays alive until the end of the next "
    "day), 0 (off the board) when neither is; on an `all_time` board, the longest streak, the "
    "largest number of consecutive solve days ever. A solve day is a day (in the leaderboard "
    "time zone) with at least one counted solve; a late solve counts on its own day and can "
    "join two streaks, changing past days. Ties: whoever reached the score (the streak's "
    "length) first is listed first. A streak board has no `window_days`: its forecast is the "
    "next day (the streak alive) and the day after (0 unless they solve). `best`: the sum over "
    "problems of each problem's best reported `score` inside the window (a board may take one "
    "problem alone); on a board where lower is better, each problem counts its score limit "
    "minus its best score, so more problems rank higher, then the lower total. Ties: who reached "
    "the total first (the latest of the moments its bests were first reported)."
)


class BoardOut(BaseModel):
    slug: str
    title: str
    window: WindowKind
    window_days: int | None = Field(description="N of a rolling window; null otherwise")
    metric: MetricKind = Field(description=METRIC_DESCRIPTION)
    score_label: Literal["Score", "Days"] = Field(
        description="What the board's scores count, as its page heads their column: Days on a "
        "streak board (a score is a number of days), Score otherwise"
    )
    ties: TiesKind


class BoardList(BaseModel):
    boards: list[BoardOut]


class Row(BaseModel):
    rank: int = Field(ge=1)
    handle: str
    score: int = Field(ge=1)


class BoardPage(BaseModel):
    board: str
    date: dt.date
    total: int = Field(ge=0, description="Programmers on the board (score above zero)")
    page: int = Field(ge=1)
    page_size: int = Field(ge=1, le=MAX_PAGE_SIZE)
    pages: int = Field(ge=1)
    entries: list[Row]


class ScoreRange(BaseModel):
    board: str
    date: dt.date
    min: int = Field(ge=1)
    max: int | None = Field(description="null: no upper bound")
    count: int = Field(ge=0, description="Programmers with a score from min to max that day")
    page: int = Field(ge=1)
    page_size: int = Field(ge=1, le=MAX_PAGE_SIZE)
    pages: int = Field(ge=1)
    entries: list[Row] = Field(description="This page of them, in rank order")


class ForecastPoint(BaseModel):
    date: dt.date
    score: int = Field(ge=0)


class Standing(BaseModel):
    board: str
    date: dt.date
    handle: str
    rank: int | None = Field(ge=1, description="null when not on the board")
    score: int = Field(ge=0)
    total: int = Field(ge=0)
    percentile: float | None = Field(
        description="Share of the board at or below this rank, in percent"
    )
    above: list[Row] = Field(description="Up to `around` programmers just above, best first")
    below: list[Row] = Field(description="Up to `around` programmers just below, best first")
    forecast: list[ForecastPoint] = Field(
        description="The score of each coming day if the programmer solves nothing more "
        "(empty on all-time boards)"
    )


class ProgrammerSearchQuery(MeQuery):
    """The board query (as for /me: the default board when `board` is absent) and the start of
    the handles to find."""

    prefix: str = Field(
        pattern=HANDLE_PATTERN,
        description="The start of a handle, any case: 1 to 32 letters, digits, _ or -",
        json_schema_extra={"example": "al"},
    )


class HandleMatch(BaseModel):
    handle: str
    rank: int | None = Field(ge=1, description="null when not on the board that day")
    score: int = Field(ge=0, description="0 when not on the board that day")


class HandleMatches(BaseModel):
    board: str
    date: dt.date
    prefix: str
    entries: list[HandleMatch] = Field(
        max_length=HANDLE_MATCHES_MAX,
        description=f"At most {HANDLE_MATCHES_MAX}, in handle order (any case); hidden and "
        "banned programmers are left out, as from the boards",
    )
    more: int = Field(ge=0, description="How many more handles start with the prefix")
    more_exact: bool = Field(
        description=f"false when matches stopped being counted at {HANDLE_MATCHES_COUNTED:,}: "
        "then at least `more` more match"
    )


# --- groups ranked against each other ----------------------------------------------------------

GROUP_SCORE = (
    "A group's score on a board day is the weighted sum of its members' scores sorted from the "
    "best, s_0 >= s_1 >= ...: sum of s_i * (1/5) * (4/5)^i (i from 0), so each member counts for "
    "less than the one before and a group is not ranked by its size alone. Its members are its "
    "programmers on the board that day (score above zero); hidden and banned programmers are "
    "left out, as from the boards. Equal scores share a rank (1, 2, 2, 4), compared exactly; "
    "`score` is rounded to one decimal."
)


class GroupsQuery(BoardQuery):
    """The board query and which groups to rank."""

    kind: Literal["country", "org"] = Field(
        description="country: the countries ranked against each other; org: the organizations",
        json_schema_extra={"example": "country"},
    )


class GroupOut(BaseModel):
    rank: int = Field(ge=1)
    group: str = Field(
        description="The country's ISO 3166 code or the organization's name: what `country` or "
        "`org` takes on the board endpoints, to rank the group's programmers"
    )
    name: str = Field(description="The country's name, or the organization's")
    score: float = Field(ge=0, description="The group's score, rounded to one decimal")
    members: int = Field(ge=1, description="The group's programmers on the board that day")


class GroupRanklist(BaseModel):
    __doc__ = f"The groups of a kind ranked against each other on a board day. {GROUP_SCORE}"

    board: str
    date: dt.date
    kind: Literal["country", "org"]
    total: int = Field(ge=0, description="Groups of that kind with programmers on the board")
    page: int = Field(ge=1)
    page_size: int = Field(ge=1, le=MAX_PAGE_SIZE)
    pages: int = Field(ge=1)
    entries: list[GroupOut] = Field(description="Best first; equal scores in a fixed order")

"""The API's request and response schemas: pydantic models that validate what comes in and
describe what goes out, from which django-ninja generates the OpenAPI document.

Requests are strict: no `true` for a number, no number for a string, no extra fields, and every
string free of control characters (NUL included) and lone surrogates. Handles, slugs and
countries take their patterns from `solutions.rules`, where models and forms take them too.
Every example here is a request the API accepts (the tests send each one).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)

from ..models import MAX_PROBLEM_POINTS, MAX_SCORE, Board
from ..rules import (
    COUNTRY_PATTERN,
    HANDLE_PATTERN,
    ORGANIZATION_MAX_LENGTH,
    PROBLEM_SLUG_PATTERN,
    SLUG_CHARACTERS,
    Scope,
    country_unknown,
)
from ..selectors import HANDLE_MATCHES_COUNTED, HANDLE_MATCHES_MAX, PAGE_SIZE
from .errors import ErrorCode

# Any character but the C0 and C1 control characters (pydantic refuses lone surrogates itself).
PRINTABLE_PATTERN = r"^[^\x00-\x1f\x7f-\x9f]*$"
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
BOARD_SLUG_PATTERN = rf"^{SLUG_CHARACTERS}+$"
MOMENT_MAX_LENGTH = 64
MAX_PAGE = 100_000
MAX_PAGE_SIZE = 100
MAX_AROUND = 20
EXAMPLE_MOMENT = "2020-01-19T10:00:00Z"


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


# --- field types -------------------------------------------------------------------------------


def moment_in_utc(value: Any) -> dt.datetime:
    """An ISO 8601 date and time with a UTC offset in whole minutes, as an aware UTC datetime."""
    if not isinstance(value, str):
        raise ValueError("give an ISO 8601 date and time as a string")
    if len(value) > MOMENT_MAX_LENGTH or CONTROL_CHARACTERS.search(value):
        raise ValueError("not an ISO 8601 date and time")
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError as error:
        raise ValueError("not an ISO 8601 date and time") from error
    offset = moment.utcoffset()
    if offset is None:
        raise ValueError("give a UTC offset, e.g. +06:00 or Z")
    if offset.seconds % 60 or offset.microseconds:
        raise ValueError("the UTC offset must be whole minutes, e.g. +05:45")
    try:
        # A moment like 0001-01-01T00:00+01:00 has no UTC date at all.
        return moment.astimezone(dt.UTC)
    except OverflowError as error:
        raise ValueError("out of range") from error


def whole_number(value: Any) -> Any:
    """JSON has one number type: 5.0 is the integer 5 (as JSON Schema says); 5.5 and true are
    still refused by the strict integer."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value


def iso_date(value: Any) -> Any:
    """YYYY-MM-DD only (pydantic alone would also take a number of seconds)."""
    if isinstance(value, str):
        try:
            return dt.datetime.strptime(value, "%Y-%m-%d").date()
        except ValueError as error:
            raise ValueError("enter the date as YYYY-MM-DD") from error
    return value


Moment = Annotated[
    dt.datetime,
    BeforeValidator(moment_in_utc),
    WithJsonSchema({"type": "string", "format": "date-time", "maxLength": MOMENT_MAX_LENGTH}),
]
Handle = Annotated[
    str, Field(pattern=HANDLE_PATTERN, description="The programmer's handle (any case)")
]
ProblemSlug = Annotated[str, Field(pattern=PROBLEM_SLUG_PATTERN, description="The problem's slug")]
RequestId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=128,
        pattern=PRINTABLE_PATTERN,
        description="The idempotency key: unique per report",
    ),
]
Points = Annotated[int, Field(ge=1, le=MAX_PROBLEM_POINTS), BeforeValidator(whole_number)]
Score = Annotated[int, Field(ge=0, le=MAX_SCORE), BeforeValidator(whole_number)]


def without_default(schema: dict) -> None:
    """For a field that may be left out but not sent as null: its document shows no default."""
    schema.pop("default", None)


def optional(description: str, **constraints: Any) -> Any:
    """A field that may be left out (None then), but not sent as null."""
    return Field(
        default=None, description=description, json_schema_extra=without_default, **constraints
    )


WindowKind = Literal[tuple(value for value, _ in Board.WINDOW_CHOICES)]  # type: ignore[misc]
MetricKind = Literal[tuple(value for value, _ in Board.METRIC_CHOICES)]  # type: ignore[misc]
TiesKind = Literal[tuple(value for value, _ in Board.TIES_CHOICES)]  # type: ignore[misc]


# --- errors ------------------------------------------------------------------------------------


class ErrorBody(BaseModel):
    code: ErrorCode = Field(description="Stable, for programs; `message` is for people.")
    message: str


class Error(BaseModel):
    error: ErrorBody


# --- judges' reports ---------------------------------------------------------------------------


class SolveRequest(Request):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "solve-1",
                    "programmer": "Alice",
                    "problem": "p3",
                    "solved_at": EXAMPLE_MOMENT,
                }
            ]
        }
    )

    id: RequestId
    programmer: Handle
    problem: ProblemSlug
    solved_at: Moment = Field(
        description="ISO 8601 with a UTC offset, e.g. 2020-01-19T12:00:00+06:00"
    )
    points: Points = optional("Points for this solve; the problem's own points when absent")
    score: Score = optional(
        "A scored problem's result (0 to 10^9): every report is kept, and best-score boards count "
        "each problem's best inside their window (higher or lower is better, per board). Several "
        "reports of a problem each need an id of their own; without a score a report counts on "
        "no best-score board"
    )


class SolveAnswer(BaseModel):
    id: str
    counted: bool = Field(
        description="false when this programmer had already solved the problem and the report "
        "has no score (a report with a score is always kept, even when it is not their best)"
    )


class SubmissionRequest(Request):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "run-9",
                    "programmer": "Alice",
                    "problem": "p1",
                    "verdict": "accepted",
                    "submitted_at": EXAMPLE_MOMENT,
                }
            ]
        }
    )

    id: RequestId
    programmer: Handle
    problem: ProblemSlug
    verdict: Literal["accepted", "rejected"] = Field(
        description="The judge's verdict on this attempt"
    )
    submitted_at: Moment = Field(
        description="When the attempt was made: ISO 8601 with a UTC offset, "
        "e.g. 2020-01-19T10:00:00+06:00"
    )


class SubmissionAnswer(BaseModel):
    id: str
    counted: bool = Field(
        description="true when an accepted verdict counted as the programmer's first solve of "
        "the problem on the boards; false for a rejected verdict or a problem already solved"
    )


# --- boards ------------------------------------------------------------------------------------


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


MAX_SCORE = 10**9  # above any score a board can hold (points and streaks included)


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


# --- a programmer's year and the problems ------------------------------------------------------


class ProgrammerActivity(BaseModel):
    """A programmer's last 365 days of solving, up to today. A solve day is a day (in the
    leaderboard time zone) with at least one counted solve: the first accepted solve of a
    problem, as the boards count it. The current streak on a day D is the number of consecutive
    solve days ending at D, or at D-1 when D is not a solve day (a streak stays alive until the
    end of the next day), 0 when neither is; the longest streak is the largest number of
    consecutive solve days ever. A late solve counts on its own day, so it can join two
    streaks."""

    model_config = ConfigDict(populate_by_name=True)

    handle: str
    from_: dt.date = Field(alias="from", description="The first day of the year shown")
    to: dt.date = Field(description="Today, in the leaderboard time zone")
    days: dict[str, int] = Field(
        description="{YYYY-MM-DD: solves} for the days from `from` to `to` with solves only"
    )
    solved: int = Field(ge=0, description="Problems solved in those days")
    active_days: int = Field(ge=0, description="Days with at least one solve among them")
    current_streak: int = Field(ge=0, description="The current streak today")
    longest_streak: int = Field(ge=0, description="The longest streak ever")


class ProblemsQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")

    page: int = Field(default=1, ge=1, le=MAX_PAGE, description="Which page")
    page_size: int = Field(default=PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE, description="Rows per page")


class ProblemOut(BaseModel):
    slug: str
    title: str
    points: int = Field(ge=1)
    solvers: int = Field(
        ge=0,
        description="Programmers on the boards who solved it (hidden and banned left out)",
    )


class ProblemsPage(BaseModel):
    total: int = Field(ge=0, description="Published problems")
    page: int = Field(ge=1)
    page_size: int = Field(ge=1, le=MAX_PAGE_SIZE)
    pages: int = Field(ge=1)
    entries: list[ProblemOut] = Field(description="In slug order")


class SolversQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")

    page: int = Field(default=1, ge=1, le=MAX_PAGE, description="Which page (50 solvers a page)")


class SolverOut(BaseModel):
    number: int = Field(ge=1, description="1 for the first solver")
    handle: str
    country: str = Field(description='ISO 3166 code, "" when not given')
    solved_at: dt.datetime


class ProblemSolvers(BaseModel):
    problem: str
    count: int = Field(ge=0, description="Programmers on the boards who solved it")
    page: int = Field(ge=1)
    page_size: int = Field(ge=1)
    pages: int = Field(ge=1)
    solvers: list[SolverOut] = Field(description="In solve order, earliest first")


# --- access tokens -----------------------------------------------------------------------------


class Credentials(BaseModel):
    # Other fields of a login form are ignored, as they always were.
    model_config = ConfigDict(
        extra="ignore",
        strict=True,
        json_schema_extra={
            "examples": [{"username": "alice", "password": "correct horse battery"}]
        },
    )

    username: str = Field(min_length=1, max_length=150, pattern=PRINTABLE_PATTERN)
    password: str = Field(max_length=4096, pattern=PRINTABLE_PATTERN)


class AccessToken(BaseModel):
    token: str
    expires_at: dt.datetime

"""A programmer's year of solving and the problems with their solvers."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, ConfigDict, Field

from ...selectors import PAGE_SIZE
from .fields import MAX_PAGE, MAX_PAGE_SIZE


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

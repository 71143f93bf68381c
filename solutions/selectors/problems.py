"""The problems and their solvers: the published problems with how many on the boards solved
each, a page of them, and a problem's first, latest and every solver (kept by `solvers`).
Hidden and banned programmers are left out of every list, as the boards leave them out."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db.models import QuerySet

from .. import solver_pages, solvers
from ..models import Problem, Programmer
from .common import PAGE_SIZE, Paged

PROBLEM_ORDERS = ("title", "solvers")


def problems_published() -> QuerySet[Problem]:
    return Problem.objects.filter(published=True)


@dataclass(frozen=True)
class ProblemRow:
    problem: Problem
    solvers: int


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


@dataclass(frozen=True)
class SolverRow:
    number: int  # 1 for the first solver
    handle: str
    country: str  # ISO 3166 code, "" when not given
    solved_at: dt.datetime


@dataclass(frozen=True)
class ProblemSolversPage(Paged):
    total: int
    page: int
    page_size: int
    rows: list[SolverRow]


def problem_solvers_page(
    *, problem: Problem, page: int, page_size: int = solvers.SOLVERS_PAGE
) -> ProblemSolversPage:
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
    return ProblemSolversPage(total=found.total, page=page, page_size=page_size, rows=rows)

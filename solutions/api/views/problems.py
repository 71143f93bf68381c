"""The published problems with their solver counts, and every solver of a problem."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Path, Query

from ... import selectors
from ..errors import ApiError
from ..schemas.fields import Error
from ..schemas.problems import ProblemSolvers, ProblemsPage, ProblemsQuery, SolversQuery
from .common import ApiRouter, paging

router = ApiRouter()


@router.read(
    "/problems",
    response={200: ProblemsPage, 400: Error},
    operation_id="listProblems",
    summary="The published problems with their solver counts, a page at a time",
)
def problems(request: HttpRequest, query: Query[ProblemsQuery]) -> dict:
    """Paginated like the boards: `total` problems, this `page` of `page_size`, in slug order;
    a page past the end is empty. `solvers` counts the programmers on the boards who solved
    each (kept up to date by every solve, hide and ban; never counted at request time)."""
    page = selectors.problems_page(page=query.page, page_size=query.page_size)
    return {
        **paging(page),
        "entries": [
            {
                "slug": row.problem.slug,
                "title": row.problem.title,
                "points": row.problem.points,
                "solvers": row.solvers,
            }
            for row in page.rows
        ],
    }


@router.read(
    "/problems/{slug}/solvers",
    response={200: ProblemSolvers, 400: Error, 404: Error},
    operation_id="getProblemSolvers",
    summary="Everybody who solved a problem, in solve order, a page at a time",
)
def problem_solvers(
    request: HttpRequest,
    query: Query[SolversQuery],
    slug: str = Path(description="The problem's slug", example="p1"),
) -> dict:
    """50 solvers a page, earliest first (then by programmer), hidden and banned programmers
    left out as `count` leaves them out, and a frozen competition's solves only once it ends.
    A page past the last is 404 `page_out_of_range` (page 1 of a problem nobody solved is an
    empty page)."""
    problem = selectors.problems_published().filter(slug=slug).first()
    if problem is None:
        raise ApiError(404, "unknown_problem", f"There is no problem {slug[:64]!r}.")
    page = selectors.problem_solvers_page(problem=problem, page=query.page)
    if page.page > page.pages:
        raise ApiError(
            404, "page_out_of_range", f"There are {page.pages} pages of solvers: ask for 1 to that."
        )
    return {
        "problem": problem.slug,
        "count": page.total,
        "page": page.page,
        "page_size": page.page_size,
        "pages": page.pages,
        "solvers": [
            {
                "number": row.number,
                "handle": row.handle,
                "country": row.country,
                "solved_at": row.solved_at,
            }
            for row in page.rows
        ],
    }

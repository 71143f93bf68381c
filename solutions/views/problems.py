"""The problems: their list, and a problem's page with its answer form and its solvers."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from .. import limits, selectors, services, solve_slots
from ..forms import AnswerForm, PageQueryForm
from ..models import Problem, Programmer
from . import programmer_of
from .refusals import busy_response, too_many_response


@require_safe
def problems(request: HttpRequest) -> HttpResponse:
    """The published problems with their solver counts, by title or (`?sort=solvers`) most
    solved first; any other `sort` is the default order."""
    order = request.GET.get("sort", "title")
    if order not in selectors.PROBLEM_ORDERS:
        order = "title"
    context = {
        "rows": selectors.problems_with_solvers(order=order),
        "order": order,
        "solved": _solved_slugs(programmer_of(request)),
    }
    return render(request, "solutions/problems.html", context)


@require_http_methods(["GET", "POST"])
def problem(request: HttpRequest, slug: str) -> HttpResponse:
    problem = get_object_or_404(selectors.problems_published(), slug=slug)
    programmer = programmer_of(request)
    if request.method == "POST" and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    data = request.POST if request.method == "POST" else None
    form = AnswerForm(data, programmer=programmer, scored=problem.scored)
    if form.is_valid():
        back = reverse("problem", args=[problem.slug])
        try:
            verdict = _answer_submit(problem, programmer, form)
        except services.SubmissionRefused as refusal:
            form.add_error(None, str(refusal))
        except limits.Limited as over:
            return too_many_response(over, back=back)
        except solve_slots.SolvesBusy as busy:
            return busy_response(busy, back=back)
        else:
            _say_verdict(request, verdict)
            return redirect("problem", slug=problem.slug)
    solved = problem.slug in _solved_slugs(programmer)
    context = _problem_context(request, problem, form, solved=solved)
    bad = form.errors or context["page_error"]
    return render(request, "solutions/problem.html", context, status=400 if bad else 200)


def _answer_submit(problem: Problem, programmer: Programmer, form: AnswerForm) -> services.Verdict:
    """Record the answer, in one of this process's slots for solves (see `solve_slots`)."""
    answer = form.cleaned_data["answer"]
    with solve_slots.answer_slot(problem=problem, answer=answer):
        return services.answer_submit(
            programmer=programmer,
            problem=problem,
            answer=answer,
            score=form.cleaned_data.get("score"),
        )


def _problem_context(
    request: HttpRequest, problem: Problem, form: AnswerForm, solved: bool
) -> dict:
    """A problem's page: the statement, the answer form and who solved it, with every solver a
    page at a time (`?page=`: a page that is no number is 400, one past the last 404)."""
    query = PageQueryForm(request.GET)
    number = (query.cleaned_data["page"] or 1) if query.is_valid() else 1
    every = selectors.problem_solvers_page(problem=problem, page=number)
    if number > every.pages:
        raise Http404("This problem's solvers have no such page.")
    return {
        "problem": problem,
        "form": form,
        "solved": solved,
        "solvers": selectors.problem_solvers(problem=problem),
        "every": every,
        "page_error": "" if query.is_valid() else "Pages are numbered from 1.",
    }


def _solved_slugs(programmer: Programmer | None) -> set[str]:
    """What the viewer solved, for their own marks: a held solve too (they know their answer)."""
    if programmer is None:
        return set()
    solves = selectors.programmer_solved_problems(programmer=programmer, held=True)
    return {solve["problem"] for solve in solves}


def _say_verdict(request: HttpRequest, verdict: services.Verdict) -> None:
    if not verdict.accepted:
        messages.error(request, "Wrong answer. It is recorded in your submissions; try again.")
    elif verdict.counted:
        messages.success(request, "Accepted — counted on every board.")
    else:
        messages.info(request, "Accepted — you had already solved this; it counts once.")

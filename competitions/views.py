"""The competition pages: the list, one competition with its problems and standings, the
register and answer forms, and the standings fragment that live pages poll (what the standings
show, and their ETag: `standings_pages`)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_cookie

from solutions import etags, limits
from solutions.forms import AnswerForm
from solutions.views import programmer_of
from solutions.views.refusals import too_many_response

from . import attempts, selectors, services, standings_pages
from .models import Competition


@require_safe
def competition_list(request: HttpRequest) -> HttpResponse:
    return render(request, "competitions/list.html", {"groups": selectors.competitions_by_status()})


@require_safe
def competition_detail(request: HttpRequest, slug: str) -> HttpResponse:
    competition = get_object_or_404(Competition, slug=slug)
    return render(request, "competitions/detail.html", _detail_context(request, competition))


@login_required
@require_POST
def competition_register(request: HttpRequest, slug: str) -> HttpResponse:
    competition = get_object_or_404(Competition, slug=slug)
    programmer = programmer_of(request)
    if programmer is None:
        messages.error(request, "Your account has no programmer handle, so it cannot register.")
        return redirect("competition", slug=slug)
    try:
        services.competition_register(competition=competition, programmer=programmer)
    except services.SubmissionRefused as refusal:
        messages.error(request, str(refusal))
    else:
        messages.success(request, f"You are registered for {competition.title}.")
    return redirect("competition", slug=slug)


@login_required
@require_POST
def competition_submit(request: HttpRequest, slug: str, letter: str) -> HttpResponse:
    competition = get_object_or_404(Competition, slug=slug)
    link = get_object_or_404(competition.links.select_related("problem"), letter=letter)
    form = AnswerForm(request.POST, programmer=programmer_of(request), prefix=link.letter)
    if form.is_valid():
        try:
            verdict = services.competition_submit(
                competition=competition,
                programmer=form.programmer,
                problem=link.problem,
                answer=form.cleaned_data["answer"],
            )
        except services.SubmissionRefused as refusal:
            # A refused answer is a 400 like a bad one; the form may be gone from the page (the
            # competition ended, the programmer was banned), so the reason is a message.
            messages.error(request, str(refusal))
        except limits.Limited as over:
            return too_many_response(
                over, back=f"{competition.get_absolute_url()}#problem-{link.letter}"
            )
        else:
            frozen = competition.is_frozen(timezone.now())
            _say_verdict(request, link.letter, verdict, frozen=frozen)
            return redirect(f"{competition.get_absolute_url()}#problem-{link.letter}")
    context = _detail_context(request, competition, bound={link.letter: form})
    return render(request, "competitions/detail.html", context, status=400)


@require_safe
def competition_standings(request: HttpRequest, slug: str) -> HttpResponse:
    """The standings page (see `standings_pages`)."""
    competition = get_object_or_404(Competition, slug=slug)
    context = standings_pages.standings_context(request=request, competition=competition)
    return render(
        request, "competitions/standings.html", context, status=_standings_status(context)
    )


@require_safe
@vary_on_cookie
@etags.live_page(standings_pages.standings_etag)
def competition_standings_live(request: HttpRequest, slug: str) -> HttpResponse:
    """The standings table alone, for polling: 304 while it has not changed (ETag)."""
    competition = standings_pages.competition_of(request, slug)
    if competition is None:
        raise Http404("No competition has that name.")
    if standings_pages.page_asked(request) is None:
        context = {"page_error": standings_pages.PAGE_ERROR}
        return render(request, "competitions/_page_error.html", context, status=400)
    table = standings_pages.standings_table(request, competition)
    missing = standings_pages.page_missing(request, competition)
    return HttpResponse(table, status=404 if missing else 200)


# --- helpers ---------------------------------------------------------------------------------


def _standings_status(context: dict) -> int:
    """A `?page=` that is no page number is a 400, one past the last page a 404."""
    if "page_error" in context:
        return 400
    return 404 if context.get("page_missing") else 200


def _page_context(request: HttpRequest, competition: Competition) -> dict:
    """What both tabs of a competition show: its header and status."""
    return {"competition": competition, "status": competition.status(timezone.now())}


def _answer_forms(links, bound: dict[str, AnswerForm]) -> dict[str, AnswerForm]:
    """One answer form per problem; only the first (or the one with errors) takes the focus, so
    the page does not jump to the last box."""
    forms = {
        link.letter: bound.get(link.letter) or AnswerForm(prefix=link.letter) for link in links
    }
    focused = next(iter(bound), None) or next(iter(forms), None)
    for letter, form in forms.items():
        if letter != focused:
            form.fields["answer"].widget.attrs.pop("autofocus", None)
    return forms


def _detail_context(
    request: HttpRequest, competition: Competition, bound: dict[str, AnswerForm] | None = None
) -> dict:
    now = timezone.now()
    programmer = programmer_of(request)
    refusal = selectors.competition_submit_refusal(
        competition=competition, programmer=programmer, now=now
    )
    own = attempts.own(competition=competition, programmer=programmer)
    solved = {attempt["problem"] for attempt in own if attempt["verdict"] == "accepted"}
    # Problems stay secret until the start (staff see them to check the set).
    show_problems = now >= competition.start or request.user.is_staff
    links = list(selectors.competition_links(competition=competition)) if show_problems else []
    letters = {link.problem.slug: link.letter for link in links}
    forms = _answer_forms(links, bound or {})
    problems = [
        {"link": link, "solved": link.problem.slug in solved, "form": forms[link.letter]}
        for link in links
    ]
    return {
        **_page_context(request, competition),
        "problems": problems,
        "can_submit": refusal is None,
        "refusal": refusal,
        "registered": selectors.competition_is_registered(
            competition=competition, programmer=programmer
        ),
        "attempts": [
            {**attempt, "letter": letters.get(attempt["problem"], attempt["problem"])}
            for attempt in own
        ],
    }


def _say_verdict(request: HttpRequest, letter: str, verdict, *, frozen: bool) -> None:
    """What an answer did; during the freeze a first right answer is held off the boards until
    the end (see `selectors`' docstring)."""
    if not verdict.accepted:
        messages.error(request, f"Problem {letter}: wrong answer. Each one costs 20 minutes.")
    elif verdict.counted and frozen:
        messages.success(
            request, f"Problem {letter}: accepted; it counts on every board when the contest ends."
        )
    elif verdict.counted:
        messages.success(request, f"Problem {letter}: accepted, and counted on every board.")
    else:
        messages.success(request, f"Problem {letter}: accepted (already solved on the boards).")

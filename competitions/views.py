"""The competition pages: the list, one competition with its problems and standings, the
register and answer forms, and the standings fragment that live pages poll."""

from __future__ import annotations

import hashlib

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_cookie

from solutions import extensions, limits
from solutions.forms import AnswerForm
from solutions.views import programmer_of
from solutions.views.refusals import too_many_response

from . import selectors, services
from .models import Competition

PUBLIC_STANDINGS_SECONDS = 10
RENDERING_SECONDS = 10  # how long others wait for one rendering before they render too


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


FOLLOWING = "following"  # `?view=following`: the people the viewer follows, as on the boards


@require_safe
def competition_standings(request: HttpRequest, slug: str) -> HttpResponse:
    """The standings page: the table (polled by activity/live.js while it can change), all of
    it or (`?view=following`) the rows of the people the viewer follows. While the competition
    runs the table is the one its polls get, from the cache once per change (so the first poll
    is a 304, and a page opened under load reads no attempt); once it has ended, the final
    table."""
    competition = get_object_or_404(Competition, slug=slug)
    context = _page_context(request, competition)
    context["following"] = _following(request)
    if competition.is_archived or competition.has_ended(timezone.now()):
        context["view"] = _standings_view(request, competition)
    else:
        html = _table_html(request, competition)
        context["standings_html"] = mark_safe(html)  # rendered by our own template, escaped there
        live_url = reverse("competition_standings_live", args=[competition.slug])
        context["live_url"] = f"{live_url}?view={FOLLOWING}" if context["following"] else live_url
        context["live_etag"] = _etag(html)
    return render(request, "competitions/standings.html", context)


@require_safe
@vary_on_cookie
def competition_standings_live(request: HttpRequest, slug: str) -> HttpResponse:
    """The standings table alone, for polling: 304 while it has not changed (ETag)."""
    competition = get_object_or_404(Competition, slug=slug)
    html = _table_html(request, competition)
    etag = _etag(html)
    if etag in request.headers.get("If-None-Match", ""):
        response = HttpResponseNotModified()
    else:
        response = HttpResponse(html)
    response["ETag"] = etag
    response["Cache-Control"] = "private, no-cache"
    return response


# --- helpers ---------------------------------------------------------------------------------


def _following(request: HttpRequest) -> bool:
    return request.GET.get("view") == FOLLOWING


def _standings_view(request: HttpRequest, competition: Competition) -> selectors.StandingsView:
    """The standings this viewer may see, only the rows of the people they follow (and their
    own) with `?view=following` (nobody's for an anonymous viewer, who is asked to log in)."""
    view = selectors.competition_standings(competition=competition, user=request.user)
    people_of = extensions.people_view_named(FOLLOWING) if _following(request) else None
    if people_of is not None:
        view.only = people_of(user=request.user) or ()
    return view


def _table_html(
    request: HttpRequest, competition: Competition, view: selectors.StandingsView | None = None
) -> str:
    """The table, shared through the cache while the competition runs (the whole standings;
    a viewer's following view is their own, rendered for them)."""
    cached = None if _following(request) else _cached_standings_html(request, competition)
    if cached is not None:
        return cached
    return _standings_html(request, view or _standings_view(request, competition))


def _standings_html(request: HttpRequest, view: selectors.StandingsView) -> str:
    context = {"view": view, "following": _following(request)}
    return render_to_string("competitions/_standings.html", context, request=request)


def _cached_standings_html(request: HttpRequest, competition: Competition) -> str | None:
    """The running competition's standings as this viewer sees them, rendered once per change
    of the competition (its version) and kept in the cache: hundreds of viewers poll them on
    contest day, and each rendering reads every attempt and writes every row. Anonymous
    viewers share one rendering; a signed-in programmer, whose own row may be live, has their
    own. None for staff (who see everything live) and once it has ended (the archive takes
    over).

    Every attempt and every hide or ban bumps the competition's version (`services`); the
    table also expires after PUBLIC_STANDINGS_SECONDS, whatever else changed."""
    now = timezone.now()
    if request.user.is_staff or not competition.is_running(now):
        return None
    version = selectors.competition_version(competition=competition)
    viewer = request.user.pk if request.user.is_authenticated else 0
    view = f"standings-html:{competition.slug}:{competition.is_frozen(now)}:{viewer}"
    html = cache.get(f"{view}:{version}")
    if html is not None:
        return html
    # One request renders a new version; the others meanwhile serve the one before it, or
    # dozens of polls arriving in the same second would all render the same table.
    if not cache.add(f"{view}:{version}:rendering", True, RENDERING_SECONDS):
        if (latest := cache.get(f"{view}:latest")) is not None:
            return latest
    html = _standings_html(request, _standings_view(request, competition))
    cache.set_many({f"{view}:{version}": html, f"{view}:latest": html}, PUBLIC_STANDINGS_SECONDS)
    return html


def _etag(html: str) -> str:
    return f'"{hashlib.sha256(html.encode()).hexdigest()[:32]}"'


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
    attempts = selectors.competition_own_attempts(competition=competition, programmer=programmer)
    solved = {attempt["problem"] for attempt in attempts if attempt["verdict"] == "accepted"}
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
            for attempt in attempts
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

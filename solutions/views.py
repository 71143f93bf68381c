"""The pages: decorate, validate, call a selector or a service, render."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import quote_etag
from django.views.decorators.cache import cache_control
from django.views.decorators.http import condition, require_http_methods, require_safe

from activity import etags
from activity import selectors as activity_selectors

from . import leaderboard, selectors, services
from .forms import AnswerForm, BoardQueryForm, SignupForm
from .models import Board, Programmer

NEIGHBOURS = 4  # shown above and below a searched programmer


def programmer_of(request: HttpRequest) -> Programmer | None:
    """The signed-in user's programmer (staff accounts may have none)."""
    if not request.user.is_authenticated:
        return None
    return getattr(request.user, "programmer", None)


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    return redirect("leaderboard")


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    form = SignupForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        try:
            # The account and the handle are made together, or not at all.
            with transaction.atomic():
                user = form.save()
                programmer = services.programmer_create(user=user, **form.programmer_fields())
        except ValidationError as error:
            form.add_error("username", error)  # the handle field (see SignupForm)
        else:
            login(request, user)
            messages.success(request, f"Welcome, {programmer.handle}! Pick a problem to solve.")
            return redirect("problems")
    status = 400 if form.errors else 200  # like the answer form: a refused form is a 400
    return render(request, "registration/signup.html", {"form": form}, status=status)


@require_safe
def problems(request: HttpRequest) -> HttpResponse:
    programmer = programmer_of(request)
    return render(
        request,
        "solutions/problems.html",
        {"problems": selectors.problems_published(), "solved": _solved_slugs(programmer)},
    )


@require_http_methods(["GET", "POST"])
def problem(request: HttpRequest, slug: str) -> HttpResponse:
    problem = get_object_or_404(selectors.problems_published(), slug=slug)
    programmer = programmer_of(request)
    if request.method == "POST" and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    form = AnswerForm(request.POST if request.method == "POST" else None, programmer=programmer)
    if form.is_valid():
        verdict = services.submission_create(
            programmer=programmer, problem=problem, answer=form.cleaned_data["answer"]
        )
        _say_verdict(request, verdict)
        return redirect("problem", slug=problem.slug)
    context = {
        "problem": problem,
        "form": form,
        "solved": problem.slug in _solved_slugs(programmer),
    }
    return render(request, "solutions/problem.html", context, status=400 if form.errors else 200)


@login_required
@require_safe
def submissions(request: HttpRequest) -> HttpResponse:
    programmer = programmer_of(request)
    attempts = selectors.programmer_submissions(programmer=programmer) if programmer else []
    return render(request, "solutions/submissions.html", {"submissions": attempts})


@require_safe
@cache_control(private=True, no_cache=True)  # always revalidate: a 304 costs one small read
@condition(etag_func=etags.board_etag)
def board(request: HttpRequest, slug: str | None = None, fragment: bool = False) -> HttpResponse:
    """A board page, or (`fragment`) just its live part, which the page's script polls."""
    board = (
        selectors.board_default()
        if slug is None
        else get_object_or_404(selectors.boards_visible(), slug=slug)
    )
    if board is None:
        raise Http404("There are no boards yet.")
    query = BoardQueryForm(request.GET, board=board)
    if not query.is_valid():
        context = {"board": board, "boards": selectors.boards_visible(), "query": query}
        return render(request, "solutions/board.html", context, status=400)
    programmer = programmer_of(request)
    if query.cleaned_data["find"] == "me" and programmer is not None and not fragment:
        return _find_me(request, board, query, programmer)
    following = request.GET.get("view") == "following"
    context = _board_context(
        board, query, programmer, following_of=request.user if following else None
    )
    if context["is_today"] or board.spec.is_all_time:
        query_string = request.GET.urlencode()
        live_url = reverse("activity:board_live", args=[board.slug])
        context["live_url"] = f"{live_url}?{query_string}" if query_string else live_url
        context["live_etag"] = quote_etag(etags.board_etag(request, board.slug, fragment=True))
    missing_page = "page" in context and context["page"].page > context["page"].pages
    template = "solutions/_board_live.html" if fragment else "solutions/board.html"
    return render(request, template, context, status=404 if missing_page else 200)


@require_safe
@cache_control(private=True, no_cache=True)
@condition(etag_func=etags.profile_etag)
def profile(request: HttpRequest, handle: str, fragment: bool = False) -> HttpResponse:
    """A programmer's profile, or (`fragment`) just its live part: standings and charts."""
    programmer = selectors.programmer_by_handle(handle)
    if programmer is None:
        raise Http404("No programmer has that handle.")
    context = {
        "profile": selectors.programmer_profile(programmer=programmer),
        "charts": activity_selectors.profile_charts(programmer=programmer),
        "live_url": reverse("activity:profile_live", args=[programmer.handle]),
        "live_etag": quote_etag(etags.profile_etag(request, programmer.handle, fragment=True)),
    }
    if not fragment:
        context["following"] = activity_selectors.is_following(
            user=request.user, programmer=programmer
        )
        context["followers"] = activity_selectors.followers_count(programmer=programmer)
    template = "solutions/_profile_live.html" if fragment else "solutions/profile.html"
    return render(request, template, context)


# --- helpers ---------------------------------------------------------------------------------


def _solved_slugs(programmer: Programmer | None) -> set[str]:
    if programmer is None:
        return set()
    return {
        solve["problem"] for solve in selectors.programmer_solved_problems(programmer=programmer)
    }


def _say_verdict(request: HttpRequest, verdict: services.Verdict) -> None:
    if not verdict.accepted:
        messages.error(request, "Wrong answer. It is recorded in your submissions; try again.")
    elif verdict.counted:
        messages.success(request, "Accepted — counted on every board.")
    else:
        messages.info(request, "Accepted — you had already solved this; it counts once.")


def _find_me(
    request: HttpRequest, board: Board, query: BoardQueryForm, programmer: Programmer
) -> HttpResponse:
    """Redirect to the page of the board that lists the signed-in programmer."""
    position = selectors.programmer_position(
        board=board, programmer=programmer, day=query.day, scope=query.scope
    )
    params = request.GET.copy()
    for name in ("find", "q", "page"):
        params.pop(name, None)
    anchor = ""
    if position is None:
        messages.info(request, "You are not on this board for that day.")
    else:
        params["page"] = str(math.ceil(position / selectors.PAGE_SIZE))
        anchor = "#me"
    return redirect(f"{request.path}?{params.urlencode()}{anchor}")


@dataclass
class Search:
    """A `?q=handle` lookup: the programmer's row with their neighbours, or why there is none."""

    handle: str
    found: bool = False
    on_board: bool = False
    total: int = 0
    rows: list[selectors.Row] = field(default_factory=list)


def _search(board: Board, handle: str, day: int, scope: str) -> Search:
    programmer = selectors.programmer_by_handle(handle)
    if programmer is None:
        return Search(handle=handle)
    standing = selectors.programmer_standing(
        board=board, programmer=programmer, day=day, scope=scope
    )
    if standing.rank is None:
        return Search(handle=programmer.handle, found=True, total=standing.total)
    above, below = selectors.programmer_neighbours(
        board=board, standing=standing, around=NEIGHBOURS, scope=scope
    )
    row = selectors.Row(standing.rank, programmer.handle, standing.score, programmer.pk)
    rows = [*above, row, *below]
    return Search(programmer.handle, found=True, on_board=True, total=standing.total, rows=rows)


def _board_context(
    board: Board, query: BoardQueryForm, programmer: Programmer | None, following_of=None
) -> dict:
    """What the board page shows. `following_of`: a user, to rank just the people they follow
    (with their global ranks) instead of the whole board."""
    day, scope, today = query.day, query.scope, services.today()
    context = {
        "board": board,
        "boards": selectors.boards_visible(),
        "query": query,
        "date": leaderboard.day_to_date(day),
        "is_today": day == today,
        "scope": scope,
        "periods": selectors.board_periods(board=board, day=day),
        "previous_date": _browsable_date(board, day - 1, today),
        "next_date": _browsable_date(board, day + 1, today),
        "me": programmer,
        "mine": None,
    }
    if programmer is not None:
        context["mine"] = selectors.programmer_standing(
            board=board, programmer=programmer, day=day, scope=scope
        )
    if following_of is not None:
        context["view"] = "following"
        context["following"] = (
            activity_selectors.following_rows(board=board, user=following_of, day=day)
            if following_of.is_authenticated
            else None
        )
        return context
    if query.cleaned_data["q"]:
        search = _search(board, query.cleaned_data["q"], day, scope)
        context.update(search=search, total=search.total if search.found else None)
        return context
    page = selectors.board_page(
        board=board, day=day, page=query.cleaned_data["page"] or 1, scope=scope
    )
    paginator = Paginator(range(page.total), selectors.PAGE_SIZE)
    # Each row with its arrow: places moved since the previous day's final board.
    context.update(page=page, total=page.total, rows=activity_selectors.board_moves(page))
    context["page_links"] = paginator.get_elided_page_range(
        min(page.page, paginator.num_pages), on_each_side=2, on_ends=1
    )
    return context


def _browsable_date(board: Board, day: int, today: int) -> dt.date | None:
    """The date of `day` when its board can be shown (past days and today; None otherwise)."""
    if board.spec.is_all_time or day > today or not selectors.day_is_browsable(board, day):
        return None
    return leaderboard.day_to_date(day)

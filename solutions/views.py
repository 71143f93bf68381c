"""The pages: decorate, validate, call a selector or a service, render."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from dataclasses import dataclass, field

from axes.helpers import get_client_ip_address
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.views import redirect_to_login
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.http import quote_etag
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.cache import cache_control
from django.views.decorators.http import condition, require_http_methods, require_safe
from django_countries import countries

from . import (
    cards,
    clock,
    etags,
    extensions,
    leaderboard,
    limits,
    live,
    selectors,
    services,
    solve_slots,
)
from .forms import AnswerForm, BoardQueryForm, PageQueryForm, SignupForm
from .models import Board, Problem, Programmer

NEIGHBOURS = 4  # shown above and below a searched programmer
# The board page's views of the groups themselves ranked against each other: `?view=<name>`.
GROUP_VIEWS = {"countries": "country", "organizations": "org"}
# Rendered rows are keyed by the board's version, so a solve makes new keys rather than stale
# entries; this only bounds how long the keys of old versions linger.
ROWS_CACHE_SECONDS = 600


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
    taken = None
    if request.method == "POST":
        try:  # before the form is checked: a loop of sign-ups costs no query, no hashing
            address = get_client_ip_address(request) or ""
            taken = limits.limit_take(limit=limits.signups(), key=address)
        except limits.Limited as over:
            return too_many_response(over, back=reverse("signup"))
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
    if taken is not None:  # only the sign-ups that made an account count
        limits.limit_give_back(taken)
    status = 400 if form.errors else 200  # like the answer form: a refused form is a 400
    return render(request, "registration/signup.html", {"form": form}, status=status)


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
        answer = form.cleaned_data["answer"]
        try:
            with solve_slots.answer_slot(problem=problem, answer=answer):
                verdict = services.answer_submit(
                    programmer=programmer,
                    problem=problem,
                    answer=answer,
                    score=form.cleaned_data.get("score"),
                )
        except services.SubmissionRefused as refusal:
            form.add_error(None, str(refusal))
        except limits.Limited as over:
            return too_many_response(over, back=reverse("problem", args=[problem.slug]))
        except solve_slots.SolvesBusy as busy:
            return busy_response(busy, back=reverse("problem", args=[problem.slug]))
        else:
            _say_verdict(request, verdict)
            return redirect("problem", slug=problem.slug)
    solved = problem.slug in _solved_slugs(programmer)
    context = _problem_context(request, problem, form, solved=solved)
    bad = form.errors or context["page_error"]
    return render(request, "solutions/problem.html", context, status=400 if bad else 200)


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
    paginator = Paginator(range(every.total), every.page_size)
    return {
        "problem": problem,
        "form": form,
        "solved": solved,
        "solvers": selectors.problem_solvers(problem=problem),
        "every": every,
        "page_error": "" if query.is_valid() else "Pages are numbered from 1.",
        "page_links": paginator.get_elided_page_range(number, on_each_side=2, on_ends=1),
    }


def too_many_message(over: limits.Limited) -> str:
    """What a form says past a rate limit."""
    if over.limit.name == "wrong-answers":
        what = f"Too many wrong answers to this problem ({over.limit.allowed} a minute)"
    else:
        what = f"Too many sign-ups from your address ({over.limit.allowed} an hour)"
    return f"{what}: try again in {over.retry_after} seconds. Nothing was recorded."


def too_many_response(over: limits.Limited, *, back: str) -> HttpResponse:
    """A form post past a rate limit: 429 with Retry-After and the limit's message, on a small
    page of its own. The form is not checked again nor the page it came from read and rendered:
    an abuser's loop costs the limiter's call and this page (19-29 ms of CPU each before)."""
    return refused_response(
        status=429,
        title="Too many tries",
        message=too_many_message(over),
        back=back,
        retry_after=over.retry_after,
    )


def refused_response(
    *, status: int, title: str, message: str, back: str, retry_after: int
) -> HttpResponse:
    """A form post refused before any work: a small page of its own with Retry-After, rendered
    without the request (no context processor runs, nothing is read for it)."""
    context = {"title": title, "message": message, "back": back, "back_text": "Back"}
    response = HttpResponse(render_to_string("refused.html", context), status=status)
    response["Retry-After"] = str(retry_after)
    return response


def busy_response(busy: solve_slots.SolvesBusy, *, back: str) -> HttpResponse:
    """A right answer past this process's bound on solves at once: 503, nothing recorded."""
    return refused_response(
        status=503,
        title="Busy for a moment",
        message=f"Many answers are being recorded just now: yours was not recorded. Send it "
        f"again in {busy.retry_after} second{'s' if busy.retry_after != 1 else ''}.",
        back=back,
        retry_after=busy.retry_after,
    )


@login_required
@require_safe
def submissions(request: HttpRequest) -> HttpResponse:
    programmer = programmer_of(request)
    attempts = selectors.programmer_submissions(programmer=programmer) if programmer else []
    return render(request, "solutions/submissions.html", {"submissions": attempts})


@require_safe
@cache_control(private=True, no_cache=True)  # always revalidate: a 304 is cheap (see etags)
@condition(etag_func=etags.board_etag)
def board(request: HttpRequest, slug: str | None = None, fragment: bool = False) -> HttpResponse:
    """A board page, or (`fragment`) just its live part, which the page's script polls."""
    board = etags.board_of(request, slug)
    if board is None:
        raise Http404("There are no boards yet." if slug is None else "No board has that name.")
    page_key = _anonymous_page_key(request, slug, fragment)
    if page_key is not None and (cached := cache.get(page_key)) is not None:
        status, content = cached
        return HttpResponse(content, status=status)
    response = _board_response(request, board, fragment)
    # A page that set a cookie or holds a CSRF token belongs to this visitor alone.
    if page_key is not None and not response.cookies and "CSRF_COOKIE_USED" not in request.META:
        cache.set(page_key, (response.status_code, response.content), ROWS_CACHE_SECONDS)
    return response


def _anonymous_page_key(request: HttpRequest, slug: str | None, fragment: bool) -> str | None:
    """The cache key of the board page as a visitor who is not signed in sees it. Its ETag
    hashes everything the page shows (that is what makes a 304 right), so the page rendered for
    one ETag is the page for every request with that ETag; signed-in viewers' pages differ by
    viewer and are rendered each time, from the cached rows."""
    if request.method != "GET" or request.user.is_authenticated:
        return None
    etag = etags.board_etag(request, slug, fragment)
    return None if etag is None else f"board-page:{etag}:{live.etag(request.path)}"


def _board_response(request: HttpRequest, board: Board, fragment: bool) -> HttpResponse:
    query = BoardQueryForm(request.GET, board=board)
    if not query.is_valid():
        context = {"board": board, "boards": selectors.boards_visible(), "query": query}
        return render(request, "solutions/board.html", context, status=400)
    programmer = programmer_of(request)
    if query.cleaned_data["find"] == "me" and programmer is not None and not fragment:
        return _find_me(request, board, query, programmer)
    context = _board_context(request, board, query, programmer, fragment)
    if context["is_today"] or board.spec.is_all_time:
        query_string = request.GET.urlencode()
        live_url = reverse("board_live", args=[board.slug])
        context["live_url"] = f"{live_url}?{query_string}" if query_string else live_url
        context["live_etag"] = quote_etag(etags.board_etag(request, board.slug, fragment=True))
    shown = context.get("page") or context.get("groups")
    missing_page = shown is not None and shown.page > shown.pages
    template = "solutions/_board_live.html" if fragment else "solutions/board.html"
    return render(request, template, context, status=404 if missing_page else 200)


@require_safe
@cache_control(private=True, no_cache=True)
@condition(etag_func=etags.profile_etag)
def profile(request: HttpRequest, handle: str, fragment: bool = False) -> HttpResponse:
    """A programmer's profile, or (`fragment`) just its live part: standings and charts. The
    apps built on `solutions` add their parts (charts, follow button) with template tags. A
    banned or deleted programmer has none; a hidden one's is for staff only. Staff also see the
    held solves (see `holds`), marked."""
    programmer = etags.profile_of(request, handle)
    if programmer is None:
        raise Http404("No programmer has that handle.")
    context = {
        "profile": selectors.programmer_profile(programmer=programmer, held=request.user.is_staff),
        "live_url": reverse("profile_live", args=[programmer.handle]),
        "live_etag": quote_etag(etags.profile_etag(request, programmer.handle, fragment=True)),
        "card_markdown": _card_markdown(request, programmer),
    }
    template = "solutions/_profile_live.html" if fragment else "solutions/profile.html"
    return render(request, template, context)


CARD_CACHE_SECONDS = 300  # how long a card is kept, here and by browsers and image proxies


@require_safe
def profile_card(request: HttpRequest, handle: str) -> HttpResponse:
    """The profile card (`cards`), public like an anonymous visitor's profile: the same card for
    everybody, so browsers, image proxies and the site's cache may keep it a few minutes. A
    hidden, banned or unknown handle is a 404, as its profile is to the public."""
    theme = request.GET.get("theme") or cards.DEFAULT_THEME
    if theme not in cards.THEMES:
        known = " or ".join(cards.THEMES)
        return HttpResponseBadRequest(
            f"Unknown theme {theme[:20]!r}: use {known}.", content_type="text/plain"
        )
    programmer = selectors.programmer_profile_for(handle=handle, viewer=AnonymousUser())
    if programmer is None:
        raise Http404("No programmer has that handle.")
    key = f"card:{programmer.pk}:{programmer.handle}:{programmer.country}:{theme}:{clock.today()}"
    svg = cache.get(key)
    if svg is None:
        svg = cards.card_svg(selectors.programmer_card(programmer=programmer), theme)
        cache.set(key, svg, CARD_CACHE_SECONDS)
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    patch_cache_control(response, public=True, max_age=CARD_CACHE_SECONDS)
    return response


# --- helpers ---------------------------------------------------------------------------------


def _card_markdown(request: HttpRequest, programmer: Programmer) -> str:
    """The Markdown that shows the profile card linked to the profile, for a README."""
    card = request.build_absolute_uri(reverse("profile_card", args=[programmer.handle]))
    page = request.build_absolute_uri(reverse("profile", args=[programmer.handle]))
    return f"[![{programmer.handle} on the leaderboard]({card})]({page})"


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
    """A `?q=` search by the start of a handle: the programmers whose handle starts with it, each
    with their rank; and when it names one programmer (the only match, or a handle typed in
    full) that programmer's row with their neighbours, or why they are not on the board."""

    found: selectors.HandleMatches
    handle: str = ""  # the one programmer shown with their neighbours
    on_board: bool = False
    rows: list[selectors.Row] = field(default_factory=list)

    @property
    def listed(self) -> bool:
        """Whether the page lists the matches: when there are several, or none (to say so)."""
        return self.found.count != 1


def _search(board: Board, text: str, day: int, scope: str) -> Search:
    found = selectors.programmers_search(
        board=board, prefix=text, day=day, scope=scope, around=NEIGHBOURS
    )
    if found.one is None:
        return Search(found)
    standing = found.one.standing
    if standing.rank is None:
        return Search(found, handle=standing.handle)
    row = selectors.Row(
        standing.rank, standing.handle, standing.score, standing.programmer_id, standing.at_or_above
    )
    rows = [*found.one.above, row, *found.one.below]
    return Search(found, handle=standing.handle, on_board=True, rows=rows)


def _board_context(
    request: HttpRequest,
    board: Board,
    query: BoardQueryForm,
    programmer: Programmer | None,
    fragment: bool = False,
) -> dict:
    """What the board page shows: the whole board's page, the programmers whose handle starts
    with a search (`?q=`; one of them with their neighbours), a registered board view
    (`?view=following`), or the countries or organizations ranked (`?view=countries`)."""
    day, scope, today = query.day, query.scope, clock.today()
    context = {
        "board": board,
        "boards": etags.boards_of(request),
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
    if not fragment:  # the filter bar's country picker (its organizations: search.js asks the API)
        context["countries"] = list(countries)
    if request.GET.get("view") in GROUP_VIEWS:
        kind = GROUP_VIEWS[request.GET["view"]]
        return context | _groups_context(request, board, query, programmer, kind, fragment)
    if programmer is not None:
        context["mine"] = selectors.programmer_standing(
            board=board, programmer=programmer, day=day, scope=scope
        )
    if (least := query.cleaned_data["min"]) is not None:
        count = selectors.board_at_or_above(board=board, score=least, day=day, scope=scope)
        sentence = score_range_sentence(board, count, least, is_today=day == today)
        context["score_range"] = {"count": count, "sentence": sentence}
    view = extensions.board_view_named(request.GET.get("view"))
    if view is not None:
        # The template finds the view's rows under its name (None: log in to see them).
        context["view"] = view.name
        context[view.name] = view.rows(board=board, user=request.user, day=day)
        return context
    if query.cleaned_data["q"]:
        search = _search(board, query.cleaned_data["q"], day, scope)
        context.update(search=search, total=search.found.total)
        return context
    return context | _page_context(request, board, query, programmer, fragment)


def score_range_sentence(board: Board, count: int, score: int, *, is_today: bool) -> str:
    """ "312 programmers solved 5 or more in the last 7 days", in the board's words."""
    who = "Nobody" if not count else f"{count} programmer{'s' if count != 1 else ''}"
    if board.is_streak:
        did = f"{'has' if count == 1 else 'have'} a streak of {score} days or more"
        did = did if board.spec.is_all_time else f"{did} going"
        return f"{who} {did}."
    did = (
        f"scored {score} points or more"
        if board.metric == Board.POINTS
        else f"solved {score} or more"
    )
    if board.spec.is_all_time:
        when = "in all"
    elif board.is_rolling:
        when = f"in the last {board.window_days} days"
    else:
        period = "week" if board.window == leaderboard.WEEK else "month"
        when = f"this {period}" if is_today else f"that {period}"
    return f"{who} {did} {when}."


def _page_context(
    request: HttpRequest,
    board: Board,
    query: BoardQueryForm,
    programmer: Programmer | None,
    fragment: bool,
) -> dict:
    """One page of the whole board: its rows (rendered once per board version: for a poll, the
    version of the last whole second) and the links to the pages around it."""
    version = etags.board_version_of(request, board.slug, polled=fragment)
    page_number = query.cleaned_data["page"] or 1
    rendered = _rows_rendered(board, version, query.day, query.scope, page_number)
    page = rendered.page
    paginator = Paginator(range(page.total), selectors.PAGE_SIZE)
    return {
        "page": page,
        "total": page.total,
        "rows": rendered.rows,
        "rows_html": rendered.html_for(programmer),
        "page_links": paginator.get_elided_page_range(
            min(page.page, paginator.num_pages), on_each_side=2, on_ends=1
        ),
    }


def _groups_context(
    request: HttpRequest,
    board: Board,
    query: BoardQueryForm,
    programmer: Programmer | None,
    kind: str,
    fragment: bool,
) -> dict:
    """One page of the board day's countries or organizations, ranked against each other (read
    once per board version, like the rows), and where the viewer's own group stands."""
    found = _groups_read(request, board, query.day, kind, query.cleaned_data["page"] or 1, fragment)
    own = _own_group(programmer, kind)
    paginator = Paginator(range(found.total), selectors.PAGE_SIZE)
    return {
        "view": request.GET["view"],
        "groups": found,
        "my_group": own
        and _written_like(selectors.group_standing(board=board, scope=own, day=query.day), found),
        "date_query": "" if found.day == clock.today() else f"date={found.date}",
        "page_links": paginator.get_elided_page_range(
            min(found.page, paginator.num_pages), on_each_side=2, on_ends=1
        ),
    }


def _groups_read(
    request: HttpRequest, board: Board, day: int, kind: str, number: int, fragment: bool = False
) -> selectors.GroupPage:
    """One page of a board day's ranklist of groups, read once per board version."""
    version = etags.board_version_of(request, board.slug, polled=fragment)
    parts = (board.slug, board.spec, version, clock.today(), day, kind, number)
    key = "board-groups:" + live.etag(*parts)
    found = cache.get(key)
    if found is None:
        found = selectors.group_ranklist(board=board, kind=kind, day=day, page=number)
        cache.set(key, found, ROWS_CACHE_SECONDS)
    return found


def _written_like(
    standing: selectors.GroupRow | None, found: selectors.GroupPage
) -> selectors.GroupRow | None:
    """The viewer's group with the page's decimals, so that it reads as its row does."""
    if standing is None or not found.rows:
        return standing
    return dataclasses.replace(standing, decimals=found.rows[0].decimals)


def _own_group(programmer: Programmer | None, kind: str) -> str:
    """The signed-in programmer's group of that kind (``country:BD``), or ""."""
    scopes = programmer.group_scopes() if programmer is not None else []
    return next((scope for scope in scopes if scope.startswith(f"{kind}:")), "")


@dataclass(frozen=True)
class RenderedRows:
    """A board page's rows, decorated by the apps built on `solutions` (arrows), and their HTML
    as anyone but the programmers on the page sees it."""

    page: selectors.BoardPage
    rows: list
    html: str

    def html_for(self, viewer: Programmer | None) -> SafeString:
        """The rows as `viewer` sees them: their own row is highlighted, so it is rendered
        afresh (from the cached rows: no reads) when they are on the page."""
        if viewer is not None and any(row.programmer_id == viewer.pk for row in self.rows):
            return _rows_html(self.rows, self.page, viewer)
        return mark_safe(self.html)  # rendered by our own template, escaped there


def _rows_html(
    rows: list, page: selectors.BoardPage, viewer: Programmer | None = None
) -> SafeString:
    """The rows' HTML: the same for every request of a board day (its links carry the day, not
    the request's query), so it can be cached."""
    date_query = "" if page.day == clock.today() else f"date={page.date}"
    context = {
        "rows": rows,
        "me": viewer,
        "date_query": date_query,
        "total": page.total,
        "first_page": page.page == 1,  # live.js: nobody can be pushed in from above
        "score_label": page.board.score_label,
    }
    return render_to_string("solutions/_rows.html", context)


def _rows_rendered(board: Board, version: int, day: int, scope: str, page: int) -> RenderedRows:
    """The rows of one page of a board day, read, decorated and rendered once per board version
    (and scope and page), then served from Django's cache (Redis in production, shared by every
    worker): a request for an unchanged board reads the version and hits the cache."""
    definition = (board.slug, board.spec, board.metric, board.ties)
    key = "board-rows:" + live.etag(*definition, version, clock.today(), day, scope, page)
    rendered = cache.get(key)
    if rendered is None:
        found = selectors.board_page(board=board, day=day, page=page, scope=scope)
        rows = extensions.board_rows_decorate(page=found, rows=found.rows)
        rendered = RenderedRows(page=found, rows=rows, html=str(_rows_html(rows, found)))
        cache.set(key, rendered, ROWS_CACHE_SECONDS)
    return rendered


def _browsable_date(board: Board, day: int, today: int) -> dt.date | None:
    """The date of `day` when its board can be shown (past days and today; None otherwise)."""
    if board.spec.is_all_time or day > today or not selectors.day_is_browsable(board, day):
        return None
    return leaderboard.day_to_date(day)

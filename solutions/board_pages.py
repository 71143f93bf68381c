"""The board page's presenter: what a board page shows, read and rendered as seldom as it can be.

Three caches, each keyed on what makes its entry right, so a change makes new keys rather than
stale entries (their expiry only bounds how long old keys linger):

- an anonymous visitor's whole page, keyed on its ETag (`etags.board_etag`): the ETag hashes
  everything the page shows, so the page rendered for one ETag is the page for every request
  with it; a signed-in viewer's page differs by viewer and is rendered each time;
- a page of a board's rows, read, decorated and rendered once per board version, day, scope
  and page (`live.rendered_once`, as a competition's standings are: one request renders a new
  version while the others serve the one before);
- a page of the groups ranked against each other (`?view=countries`), read once per board
  version likewise.

The versions come from `etags.board_version_of`, remembered on the request, so the ETag and the
page share one read; Django's cache is Redis in production, shared by every worker.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import quote_etag
from django.utils.safestring import SafeString, mark_safe
from django_countries import countries

from . import clock, etags, extensions, leaderboard, live, selectors
from .forms import BoardQueryForm
from .models import Board, Programmer

# The board page's views of the groups themselves ranked against each other: `?view=<name>`.
GROUP_VIEWS = {"countries": "country", "organizations": "org"}
NEIGHBOURS = 4  # shown above and below a searched programmer
# How long the keys of old versions (and old ETags) linger in the cache.
ROWS_CACHE_SECONDS = 600


# --- the anonymous visitor's whole page ------------------------------------------------------


def anonymous_page_key(request: HttpRequest, slug: str | None, fragment: bool) -> str | None:
    """The cache key of the board page as a visitor who is not signed in sees it (None: the
    page is not cached: a signed-in viewer's, or one that may not be answered with a 304)."""
    if request.method != "GET" or request.user.is_authenticated:
        return None
    etag = etags.board_etag(request, slug, fragment)
    return None if etag is None else f"board-page:{etag}:{live.etag(request.path)}"


def page_cached(key: str | None) -> HttpResponse | None:
    """The page kept under `key` (see `anonymous_page_key`), if any."""
    cached = live.kept_get(key) if key is not None else None
    if cached is None:
        return None
    status, content = cached
    return HttpResponse(content, status=status)


def page_keep(key: str | None, request: HttpRequest, response: HttpResponse) -> None:
    """Keep the page rendered for `key`, unless it is this visitor's alone: one that set a
    cookie or holds a CSRF token."""
    if key is None or live.shows_older(request):  # its rows are older than its ETag says
        return
    if not response.cookies and "CSRF_COOKIE_USED" not in request.META:
        live.kept_set(key, (response.status_code, response.content), ROWS_CACHE_SECONDS)


# --- what the page shows ---------------------------------------------------------------------


def board_context(
    *,
    request: HttpRequest,
    board: Board,
    query: BoardQueryForm,
    programmer: Programmer | None,
    fragment: bool = False,
) -> dict:
    """What the board page shows: the whole board's page, the programmers whose handle starts
    with a search (`?q=`; one of them with their neighbours), a registered board view
    (`?view=following`), or the countries or organizations ranked (`?view=countries`); and,
    while it can change, where its script polls its live part."""
    context = _frame_context(request, board, query, programmer, fragment)
    if request.GET.get("view") in GROUP_VIEWS:
        kind = GROUP_VIEWS[request.GET["view"]]
        context |= _groups_context(request, board, query, programmer, kind, fragment)
    else:
        context |= _programmers_context(request, board, query, programmer, fragment)
    if context["is_today"] or board.spec.is_all_time:
        context |= _live_context(request, board)
    return context


def page_missing(context: dict) -> bool:
    """Whether the page asked for is past the last one (a 404 that still shows the board)."""
    shown = context.get("page") or context.get("groups")
    return shown is not None and shown.page > shown.pages


def _frame_context(
    request: HttpRequest,
    board: Board,
    query: BoardQueryForm,
    programmer: Programmer | None,
    fragment: bool,
) -> dict:
    """What every view of the board shows around its rows: the tabs, the day and its
    neighbours, the periods, the filters."""
    day, today = query.day, clock.today()
    context = {
        "board": board,
        "boards": etags.boards_of(request),
        "query": query,
        "date": leaderboard.day_to_date(day),
        "is_today": day == today,
        "scope": query.scope,
        "periods": selectors.board_periods(board=board, day=day),
        "previous_date": _browsable_date(board, day - 1, today),
        "next_date": _browsable_date(board, day + 1, today),
        "me": programmer,
        "mine": None,
    }
    if not fragment:  # the filter bar's country picker (its organizations: search.js asks the API)
        context["countries"] = list(countries)
    return context


def _programmers_context(
    request: HttpRequest,
    board: Board,
    query: BoardQueryForm,
    programmer: Programmer | None,
    fragment: bool,
) -> dict:
    """The programmers shown: the viewer's own standing, how many reach `?min=`, then a board
    view's rows, a search's matches or one page of the whole board."""
    day, scope = query.day, query.scope
    context = {}
    if programmer is not None:
        context["mine"] = selectors.programmer_standing(
            board=board, programmer=programmer, day=day, scope=scope
        )
    if (least := query.cleaned_data["min"]) is not None:
        count = selectors.board_at_or_above(board=board, score=least, day=day, scope=scope)
        sentence = score_range_sentence(board, count, least, is_today=day == clock.today())
        context["score_range"] = {"count": count, "sentence": sentence}
    view = extensions.board_view_named(request.GET.get("view"))
    if view is not None:
        # The template finds the view's rows under its name (None: log in to see them).
        return context | {
            "view": view.name,
            view.name: view.rows(board=board, user=request.user, day=day),
        }
    if query.cleaned_data["q"]:
        search = board_search(board, query.cleaned_data["q"], day, scope)
        return context | {"search": search, "total": search.found.total}
    return context | _page_context(request, board, query, programmer, fragment)


def _live_context(request: HttpRequest, board: Board) -> dict:
    """Where the page's script polls its live part, and the ETag it starts from."""
    query_string = request.GET.urlencode()
    live_url = reverse("board_live", args=[board.slug])
    # Rows older than the version read: the first poll must not be a 304 (see `live`).
    etag = None if live.shows_older(request) else etags.board_etag(request, board.slug, True)
    return {
        "live_url": f"{live_url}?{query_string}" if query_string else live_url,
        "live_etag": quote_etag(etag) if etag else "",
    }


def _browsable_date(board: Board, day: int, today: int) -> dt.date | None:
    """The date of `day` when its board can be shown (past days and today; None otherwise)."""
    if board.spec.is_all_time or day > today or not selectors.day_is_browsable(board, day):
        return None
    return leaderboard.day_to_date(day)


# --- a search and a score range --------------------------------------------------------------


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


def board_search(board: Board, text: str, day: int, scope: str) -> Search:
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


# --- a page of the rows ----------------------------------------------------------------------


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
    rendered = rows_rendered(request, board, version, query.day, query.scope, page_number)
    page = rendered.page
    return {
        "page": page,
        "total": page.total,
        "rows": rendered.rows,
        "rows_html": rendered.html_for(programmer),
    }


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


def rows_rendered(
    request: HttpRequest, board: Board, version: int, day: int, scope: str, page: int
) -> RenderedRows:
    """The rows of one page of a board day, read, decorated and rendered once per board version
    (and scope and page), then served from Django's cache: a request for an unchanged board
    reads the version and hits the cache (see `live.rendered_once`)."""
    definition = (board.slug, board.spec, board.metric, board.ties)
    # `v3`: the entries are `board_pages.RenderedRows`, under `live.rendered_once`'s keys.
    key = "board-rows:v3:" + live.etag(*definition, clock.today(), day, scope, page)

    def render() -> RenderedRows:
        found = selectors.board_page(board=board, day=day, page=page, scope=scope)
        rows = extensions.board_rows_decorate(page=found, rows=found.rows)
        return RenderedRows(page=found, rows=rows, html=str(_rows_html(rows, found)))

    return live.rendered_once(request, key, version, render, seconds=ROWS_CACHE_SECONDS)


def _rows_html(
    rows: list, page: selectors.BoardPage, viewer: Programmer | None = None
) -> SafeString:
    """The rows' HTML: the same for every request of a board day (its links carry the day, not
    the request's query), so it can be cached."""
    date_query = "" if page.day == clock.today() else f"date={page.date}"
    context = {
        "rows": rows,
        "people": page.programmers,
        "me": viewer,
        "date_query": date_query,
        "total": page.total,
        "first_page": page.page == 1,  # live.js: nobody can be pushed in from above
        "score_label": page.board.score_label,
    }
    return render_to_string("solutions/_rows.html", context)


# --- a page of the groups --------------------------------------------------------------------


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
    return {
        "view": request.GET["view"],
        "groups": found,
        "my_group": own
        and _written_like(selectors.group_standing(board=board, scope=own, day=query.day), found),
        "date_query": "" if found.day == clock.today() else f"date={found.date}",
    }


def _groups_read(
    request: HttpRequest, board: Board, day: int, kind: str, number: int, fragment: bool = False
) -> selectors.GroupPage:
    """One page of a board day's ranklist of groups, read once per board version."""
    version = etags.board_version_of(request, board.slug, polled=fragment)
    parts = (board.slug, board.spec, version, clock.today(), day, kind, number)
    key = "board-groups:" + live.etag(*parts)
    found = live.kept_get(key)
    if found is None:
        found = selectors.group_ranklist(board=board, kind=kind, day=day, page=number)
        live.kept_set(key, found, ROWS_CACHE_SECONDS)
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

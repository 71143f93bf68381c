"""The standings pages' presenter: what a competition's standings page and its live table show,
and the table's ETag, on the live-page layer of `solutions` (`live`, `etags`) as the boards are.

The table is shown a page of `selectors.STANDINGS_PAGE_SIZE` rows at a time (`?page=`), with the
page links and "your row is on page n" around it rendered for each request. While the
competition runs, a page of the table everybody but staff sees is rendered once per version of
the competition's standings (read through the cache, see `selectors.competition_version`),
frozen state, viewer and page (`live.rendered_once`): hundreds of viewers poll it on contest
day, and the renderings of a version share one reading of every attempt (`attempts.at_version`).
Anonymous viewers share one rendering, and so do
signed-in programmers before the freeze, each with their own row marked in it (`_as_viewer`);
past the freeze a programmer's own row is live, and they have a rendering of their own. Staff
(who see everything live), a following view (the viewer's own) and an upcoming competition's
table are rendered for the request, against the version as it is now.

The table's ETag is built from that version and everything else the table shows: the viewer,
staff or not, the frozen state, the competition's status and times, the following view and whom
the viewer follows (`extensions.page_fingerprint`), and the span of PUBLIC_STANDINGS_SECONDS the
request falls in, so that what no version counts (an admin's edit of the problems) still shows
within that time. Once the competition has ended nothing bumps
its version any more (a hide or ban after the end changes the final table; the archive replaces
the computed one), so an ended competition's ETag hashes the table itself. The whole page has no
ETag: its clock carries the server's time of the request, which the page's script measures
itself against, so no two requests' pages are the same.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from urllib.parse import urlencode

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.http import quote_etag
from django.utils.safestring import mark_safe

from solutions import extensions, live, recent
from solutions.etags import request_memo

from . import selectors
from .models import Competition

Viewer = AbstractBaseUser | AnonymousUser
PUBLIC_STANDINGS_SECONDS = 10  # how long a rendering of the table is kept
FOLLOWING = "following"  # `?view=following`: the people the viewer follows, as on the boards
PAGE_ERROR = "Enter the page as a whole number from 1."  # `?page=` that is no page number


def competition_of(request: HttpRequest, slug: str) -> Competition | None:
    """The competition `slug`, read once for the ETag and the view (None: 404)."""
    return request_memo(request, ("competition", slug), lambda: selectors.competition_by_slug(slug))


def standings_context(*, request: HttpRequest, competition: Competition) -> dict:
    """What the standings page shows: the competition's header and status, and a page of the
    table (polled by solutions/live.js while it can change), all of it or (`?view=following`) the
    rows of the people the viewer follows. While the competition runs the table is the one its
    polls get, from the cache once per change (so the first poll is a 304, and a page opened
    under load reads no attempt); once it has ended, the final table. `page_error` says why a
    `?page=` that is no page number shows none (a 400)."""
    now = _now(request)
    context = {
        "competition": competition,
        "status": competition.status(now),
        "following": _following(request),
    }
    if page_asked(request) is None:
        return context | {"page_error": PAGE_ERROR}
    table = mark_safe(standings_table(request, competition))  # our own templates, escaped there
    context |= {"standings_html": table, "page_missing": page_missing(request, competition)}
    if competition.is_archived or competition.has_ended(now):
        return context
    # A table older than the version read: the first poll must not be a 304 (see `live`).
    etag = None if live.shows_older(request) else standings_etag(request, competition.slug)
    return context | {
        "live_url": _live_url(request, competition),
        "live_etag": quote_etag(etag) if etag else "",
    }


def page_asked(request: HttpRequest) -> int | None:
    """The page of the table `?page=` asks for (1 without it); None when it is no page number."""
    text = request.GET.get("page") or "1"
    return int(text) if re.fullmatch(r"[1-9][0-9]{0,6}", text) else None


def page_missing(request: HttpRequest, competition: Competition) -> bool:
    """Whether the page asked for is past the table's last (the page and its polls: a 404)."""
    table = _table(request, competition)
    return table.page > table.pages


def _live_url(request: HttpRequest, competition: Competition) -> str:
    """The live table's URL: the same view, page and display mode as the page's."""
    query = {"view": FOLLOWING} if _following(request) else {}
    if (page := page_asked(request)) and page > 1:
        query["page"] = page
    if request.GET.get("display") == "1":
        query["display"] = 1  # the page links inside the table keep it
    url = reverse("competition_standings_live", args=[competition.slug])
    return f"{url}?{urlencode(query)}" if query else url


def standings_table(request: HttpRequest, competition: Competition) -> str:
    """The live fragment as this viewer sees it now, once per request: a page of the table, and
    around it the page links and the link to the viewer's own row, rendered for the request
    (its query string; a page of the table is shared, see the docstring)."""

    def fragment() -> str:
        context = {"table": _table(request, competition)}
        return render_to_string("competitions/_standings_live.html", context, request=request)

    return request_memo(request, ("standings-table",), fragment)


def standings_etag(request: HttpRequest, slug: str) -> str | None:
    """The live table's ETag (for Django's `condition`; None: no such competition)."""
    competition = competition_of(request, slug)
    if competition is None:
        return None
    return request_memo(request, ("standings-etag",), lambda: _etag(request, competition))


def _etag(request: HttpRequest, competition: Competition) -> str:
    now = _now(request)
    if competition.is_archived or competition.has_ended(now):
        return live.etag("standings-final", standings_table(request, competition))
    user = request.user
    return live.etag(
        "standings",
        *_shown(competition, now),
        _version(request, competition),
        user.pk if user.is_authenticated else 0,
        user.is_staff,
        _following(request),
        page_asked(request),
        extensions.page_fingerprint(
            request=request, page="standings", fragment=True, subject=competition
        ),
    )


def _shown(competition: Competition, now: dt.datetime) -> tuple:
    """What the table shows of the competition itself, now; and the span of
    PUBLIC_STANDINGS_SECONDS it is in, as its rendering is kept that long: what no version
    counts (a problem renamed or added in the admin) shows within it, as before the ETags."""
    return (
        competition.slug,
        competition.status(now),
        competition.is_frozen(now),
        competition.start,  # the solve minutes
        competition.freeze_at,
        competition.end,
        int(now.timestamp() // PUBLIC_STANDINGS_SECONDS),
    )


@dataclass(frozen=True)
class RenderedTable:
    """A page of the table rendered, as the cache keeps it, with what its frame shows: which
    page of how many, and the page of the viewer's own row (None: not listed)."""

    html: str
    page: int
    pages: int
    viewer_page: int | None

    @property
    def safe_html(self) -> str:
        return mark_safe(self.html)  # rendered by our own template, escaped there


def _table(request: HttpRequest, competition: Competition) -> RenderedTable:
    """A page of the table: shared through the cache while the competition runs (see the
    docstring), once per request."""
    return request_memo(request, ("standings-page",), lambda: _table_of(request, competition))


def _table_of(request: HttpRequest, competition: Competition) -> RenderedTable:
    now = _now(request)
    if not _shared(request, competition, now):
        return _render(request, competition, request.user)
    programmer = request_memo(
        request, ("viewer",), lambda: selectors.viewer_programmer(request.user)
    )
    if programmer is not None and competition.is_frozen(now):
        # Their own row is live past the freeze, and it may move others': their own table.
        return _rendered(request, competition, request.user.pk, request.user)
    public = _rendered(request, competition, 0, AnonymousUser())
    if programmer is None:
        return public
    return _as_viewer(request, competition, public, programmer.pk)


def _rendered(
    request: HttpRequest, competition: Competition, viewer: int, user: Viewer
) -> RenderedTable:
    """The page of the table as `user` sees it, rendered once per version of the standings for
    everybody who sees it alike (`viewer`: 0 for the public table, else the user's id)."""
    # `v2`: the entries are `RenderedTable`s, a page each.
    shown = live.etag(*_shown(competition, _now(request)))
    key = f"standings-html:v2:{shown}:{viewer}:{page_asked(request)}"
    return live.rendered_once(
        request,
        key,
        _version(request, competition),
        lambda: _render(request, competition, user),
        seconds=PUBLIC_STANDINGS_SECONDS,
    )


def _as_viewer(
    request: HttpRequest, competition: Competition, public: RenderedTable, programmer_id: int
) -> RenderedTable:
    """The public page of the table as a programmer sees it before the freeze: the same rows,
    their own marked as `_standings.html` marks it (``class="me"`` on the row, "(you)" after the
    handle; `tests/test_competition_pages.py` holds the two equal for every participant), and the
    page of their own row. Hundreds of participants watch the standings on contest day: each
    had a rendering of their own at every version."""
    html = public.html
    start = html.find(f'<tr data-key="{programmer_id}" ')
    if start < 0:
        own_page = _own_page(request, competition, programmer_id)
        return RenderedTable(html, public.page, public.pages, own_page)
    row_end = html.index(">", start)
    handle_end = html.index("</a>", row_end) + len("</a>")
    html = (
        f'{html[:row_end]} class="me"{html[row_end:handle_end]}'
        f' <span class="you">(you)</span>{html[handle_end:]}'
    )
    return RenderedTable(html, public.page, public.pages, public.page)


def _own_page(request: HttpRequest, competition: Competition, programmer_id: int) -> int | None:
    """The page of a programmer's row in the public table (None: not on it): from every listed
    programmer's page, worked out once per version of the standings."""

    def pages() -> dict[int, int]:
        view = _standings_view(request, competition, AnonymousUser())
        size = selectors.STANDINGS_PAGE_SIZE
        return {row.programmer_id: i // size + 1 for i, row in enumerate(view.listed)}

    shown = live.etag(*_shown(competition, _now(request)))
    key, version = f"standings-pages:v1:{shown}", _version(request, competition)
    # Kept as it is in the process (not unpickled from its copy at each poll: some 100 KB at
    # 10,000 participants, for every signed-in programmer off their page), one a competition:
    # what is shown changes every PUBLIC_STANDINGS_SECONDS, so it is part of the tag, not the name.
    of_everybody = recent.latest(
        f"standings-pages:{competition.pk}",
        (shown, version),
        lambda: live.rendered_once(request, key, version, pages, seconds=PUBLIC_STANDINGS_SECONDS),
    )
    return of_everybody.get(programmer_id)


def _shared(request: HttpRequest, competition: Competition, now: dt.datetime) -> bool:
    """Whether the table is rendered once per version for everybody who sees it alike."""
    return competition.is_running(now) and not request.user.is_staff and not _following(request)


def _version(request: HttpRequest, competition: Competition) -> int:
    """The standings' version: a shared table's through the cache (see `selectors`), one
    rendered for the request as it is now."""
    cached = _shared(request, competition, _now(request))
    return request_memo(
        request,
        ("standings-version", cached),
        lambda: selectors.competition_version(competition=competition, cached=cached),
    )


def _render(request: HttpRequest, competition: Competition, user: Viewer) -> RenderedTable:
    """The page of the table as `user` sees it (the public table: anonymous)."""
    view = _standings_view(request, competition, user)
    context = {"view": view, "following": _following(request), "user": user}
    html = render_to_string("competitions/_standings.html", context, request=request)
    return RenderedTable(html, view.page or 1, view.pages, view.viewer_page)


def _standings_view(
    request: HttpRequest, competition: Competition, user: Viewer
) -> selectors.StandingsView:
    """The standings `user` may see, only the rows of the people they follow (and their own)
    with `?view=following` (nobody's for an anonymous viewer, who is asked to log in)."""
    view = selectors.competition_standings(
        competition=competition,
        user=user,
        now=_now(request),
        version=_version(request, competition),
    )
    people_of = extensions.people_view_named(FOLLOWING) if _following(request) else None
    if people_of is not None:
        view.only = people_of(user=user) or ()
    view.page = page_asked(request) or 1
    return view


def _following(request: HttpRequest) -> bool:
    return request.GET.get("view") == FOLLOWING


def _now(request: HttpRequest) -> dt.datetime:
    """One moment for the whole request: its ETag and its table agree on the status."""
    return request_memo(request, ("now",), timezone.now)

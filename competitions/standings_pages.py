"""The standings pages' presenter: what a competition's standings page and its live table show,
and the table's ETag, on the live-page layer of `solutions` (`live`, `etags`) as the boards are.

While the competition runs, the table everybody but staff sees is rendered once per version of
the competition's standings (read through the cache, see `selectors.competition_version`),
frozen state and viewer (`live.rendered_once`): hundreds of viewers poll it on contest day, and
each rendering reads every attempt. Anonymous viewers share one rendering; a signed-in
programmer, whose own row may be live, has their own. Staff (who see everything live), a
following view (the viewer's own) and an upcoming competition's table are rendered for the
request, against the version as it is now.

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

from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.http import quote_etag
from django.utils.safestring import mark_safe

from solutions import extensions, live
from solutions.etags import request_memo

from . import selectors
from .models import Competition

PUBLIC_STANDINGS_SECONDS = 10  # how long a rendering of the table is kept
FOLLOWING = "following"  # `?view=following`: the people the viewer follows, as on the boards


def competition_of(request: HttpRequest, slug: str) -> Competition | None:
    """The competition `slug`, read once for the ETag and the view (None: 404)."""
    return request_memo(request, ("competition", slug), lambda: selectors.competition_by_slug(slug))


def standings_context(*, request: HttpRequest, competition: Competition) -> dict:
    """What the standings page shows: the competition's header and status, and the table (polled
    by solutions/live.js while it can change), all of it or (`?view=following`) the rows of the
    people the viewer follows. While the competition runs the table is the one its polls get,
    from the cache once per change (so the first poll is a 304, and a page opened under load
    reads no attempt); once it has ended, the final table."""
    now = _now(request)
    context = {
        "competition": competition,
        "status": competition.status(now),
        "following": _following(request),
    }
    if competition.is_archived or competition.has_ended(now):
        return context | {"view": _standings_view(request, competition)}
    live_url = reverse("competition_standings_live", args=[competition.slug])
    table = standings_table(request, competition)
    # A table older than the version read: the first poll must not be a 304 (see `live`).
    etag = None if live.shows_older(request) else standings_etag(request, competition.slug)
    return context | {
        "standings_html": mark_safe(table),  # rendered by our own template, escaped there
        "live_url": f"{live_url}?view={FOLLOWING}" if context["following"] else live_url,
        "live_etag": quote_etag(etag) if etag else "",
    }


def standings_table(request: HttpRequest, competition: Competition) -> str:
    """The table's HTML as this viewer sees it now (the live fragment), once per request."""
    return request_memo(request, ("standings-table",), lambda: _table(request, competition))


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


def _table(request: HttpRequest, competition: Competition) -> str:
    """The table: shared through the cache while the competition runs (see the docstring)."""
    now = _now(request)
    if not _shared(request, competition, now):
        return _render(request, competition)
    viewer = request.user.pk if request.user.is_authenticated else 0
    key = f"standings-html:{live.etag(*_shown(competition, now))}:{viewer}"
    version = _version(request, competition)
    return live.rendered_once(
        request,
        key,
        version,
        lambda: _render(request, competition),
        seconds=PUBLIC_STANDINGS_SECONDS,
    )


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


def _render(request: HttpRequest, competition: Competition) -> str:
    context = {"view": _standings_view(request, competition), "following": _following(request)}
    return render_to_string("competitions/_standings.html", context, request=request)


def _standings_view(request: HttpRequest, competition: Competition) -> selectors.StandingsView:
    """The standings this viewer may see, only the rows of the people they follow (and their
    own) with `?view=following` (nobody's for an anonymous viewer, who is asked to log in)."""
    view = selectors.competition_standings(
        competition=competition, user=request.user, now=_now(request)
    )
    people_of = extensions.people_view_named(FOLLOWING) if _following(request) else None
    if people_of is not None:
        view.only = people_of(user=request.user) or ()
    return view


def _following(request: HttpRequest) -> bool:
    return request.GET.get("view") == FOLLOWING


def _now(request: HttpRequest) -> dt.datetime:
    """One moment for the whole request: its ETag and its table agree on the status."""
    return request_memo(request, ("now",), timezone.now)

"""ETags of the live pages (for Django's `condition` decorator): the board and the profile, each
as a whole page and as the fragment their script polls.

An ETag hashes everything the response shows that can change: the board's version counter (one
`_id` read, bumped by every solve, see `live`), the day, the query, the viewer, for whole pages
the header (the CSRF secret in its forms) and the board tabs, and whatever the apps built on
`solutions` add to the page (`extensions.page_fingerprint`: the bell, the follow button...).
While a message waits to be shown a page gets no ETag, so it is never answered with a stale 304.

A poll with nothing new is the site's most frequent request, so the ETag reads as little as it
can: the visible boards and the board's version come from Django's cache (see
`selectors.boards_visible_cached` and `live.board_version_cached`), so an anonymous poll touches
neither SQL nor MongoDB; and it remembers on the request what it read (the board, its version)
for the view to reuse.

`live_page` decorates every live view (these, and the pages of the apps built on `solutions`
with live parts, such as a competition's standings) the same way.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.contrib.messages import get_messages
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import condition

from . import extensions, holds, live, mongo, selectors
from .clock import today
from .models import Board, Programmer

T = TypeVar("T")


def request_memo(request: HttpRequest, key: tuple, compute: Callable[[], T]) -> T:
    """`compute()` once per request: the ETag function and the view then share one read."""
    memo = request.__dict__.setdefault("_solutions_memo", {})
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def live_page(etag_func: Callable[..., str | None]) -> Callable:
    """Decorate a live view: every response is private and revalidated (a 304 is cheap), answered
    304 while `etag_func(request, *args, **kwargs)` is the ETag the browser has (Django's
    `condition`); a response that shows an older rendering than its ETag's version goes out
    without it (see `live.rendered_once`), so the next poll gets the new one."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        conditional = condition(etag_func=etag_func)(view)

        @functools.wraps(view)
        def answer(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            response = conditional(request, *args, **kwargs)
            if live.shows_older(request):
                response.headers.pop("ETag", None)
            return response

        return cache_control(private=True, no_cache=True)(answer)

    return decorate


def boards_of(request: HttpRequest) -> list[Board]:
    """The visible boards, read once per request: the page's board, its tabs and the ETag's
    fingerprint of the tabs all come from this one read."""
    return request_memo(request, ("boards",), selectors.boards_visible_cached)


def board_of(request: HttpRequest, slug: str | None) -> Board | None:
    """The visible board `slug` (the default board when None)."""
    boards = boards_of(request)
    if slug is None:
        return next((board for board in boards if board.is_default), boards[0] if boards else None)
    return next((board for board in boards if board.slug == slug), None)


def board_version_of(request: HttpRequest, slug: str, *, polled: bool = False) -> int:
    """The board's version for this request: a signed-in viewer's whole page is exact (their own
    solve shows at once); a poll's (`polled`: the live fragment) and an anonymous visitor's whole
    page, who has no solve of their own to see, change at most once a second (see `live`): on
    contest day every batch of solves is a new version, and each would render the page again."""
    polled = polled or not request.user.is_authenticated

    def read() -> int:  # a page also asks for its live part's version: one read for both
        return request_memo(request, ("read", slug), lambda: live.board_version(slug))

    if polled:
        return request_memo(
            request, ("polled", slug), lambda: live.board_version_polled(slug, read)
        )
    return request_memo(request, ("version", slug), lambda: live.board_version_cached(slug, read))


def _viewer(request: HttpRequest) -> int:
    return request.user.pk if request.user.is_authenticated else 0


def _page(request: HttpRequest) -> tuple | None:
    """What a whole page shows around its live part (None: do not answer 304)."""
    if len(get_messages(request)):
        return None
    return (
        request.COOKIES.get(settings.CSRF_COOKIE_NAME, ""),
        tuple((board.slug, board.title) for board in boards_of(request)),
    )


def board_etag(request: HttpRequest, slug: str | None = None, fragment: bool = False) -> str | None:
    return request_memo(
        request, ("board-etag", slug, fragment), lambda: _board_etag(request, slug, fragment)
    )


def _board_etag(request: HttpRequest, slug: str | None, fragment: bool) -> str | None:
    board = board_of(request, slug)
    if board is None:
        return None
    parts = [
        "board",
        fragment,
        board.slug,
        board.title,
        board.spec,
        board.metric,
        board.ties,
        board_version_of(request, board.slug, polled=fragment),
        today(),
        sorted(request.GET.lists()),
        _newest_programmer() if request.GET.get("q") else None,
        _viewer(request),
        extensions.page_fingerprint(
            request=request, page="board", fragment=fragment, subject=board
        ),
    ]
    return _etag(request, parts, fragment)


def _newest_programmer() -> int | None:
    """A search lists programmers who have solved nothing yet, so a sign-up changes its result
    without changing any board's version: the newest programmer's id (one indexed read)."""
    return Programmer.objects.order_by("-pk").values_list("pk", flat=True).first()


def profile_of(request: HttpRequest, handle: str) -> Programmer | None:
    """The programmer whose profile this request may see under `handle` (None: 404; see
    `selectors.programmer_profile_for`), read once for the ETag and the view."""
    return request_memo(
        request,
        ("programmer", handle),
        lambda: selectors.programmer_profile_for(handle=handle, viewer=request.user),
    )


def profile_etag(request: HttpRequest, handle: str, fragment: bool = False) -> str | None:
    programmer = profile_of(request, handle)
    if programmer is None:
        return None
    versions = request_memo(  # the page's ETag and its live part's: one read
        request, ("versions",), lambda: live.board_versions(b.slug for b in boards_of(request))
    )
    parts = [
        "profile",
        fragment,
        programmer.pk,
        programmer.handle,
        programmer.country,
        programmer.organization,
        programmer.on_boards,
        sorted(versions.items()),
        today(),
        _viewer(request),
        extensions.page_fingerprint(
            request=request, page="profile", fragment=fragment, subject=programmer
        ),
    ]
    if not programmer.on_boards:
        # Their solves leave the boards (and so the versions) alone but still list here, once
        # they are not held (see `holds`).
        solves = {"programmer_id": programmer.pk, **holds.SHOWN}
        parts.append(mongo.solves().count_documents(solves))
    if request.user.is_staff:
        # Staff also see the held solves, which change no board while held.
        held = {"programmer_id": programmer.pk, **holds.HELD}
        parts.append(mongo.solves().count_documents(held))
    return _etag(request, parts, fragment)


def _etag(request: HttpRequest, parts: list, fragment: bool) -> str | None:
    """The ETag of these parts; a whole page also hashes what it shows around its live part
    (None: never answer it with a 304)."""
    if not fragment:
        page = _page(request)
        if page is None:
            return None
        parts.append(page)
    return live.etag(*parts)

"""ETags of the live pages (for Django's `condition` decorator): the board and the profile, each
as a whole page and as the fragment their script polls.

An ETag hashes everything the response shows that can change: the board's version counter (one
small read, bumped by every solve, see `live`), the day, the query, the viewer, and for whole
pages the header (unread count, the CSRF secret in its forms) and the board tabs. While a
message waits to be shown a page gets no ETag, so it is never answered with a stale 304.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.contrib.messages import get_messages
from django.http import HttpRequest

from solutions import live
from solutions import mongo as solutions_mongo
from solutions import selectors as board_selectors
from solutions.services import today

from . import selectors

# Profiles show rank history, which the snapshots fill in the background: their ETag also
# changes every few minutes, so a new history point shows up without waiting for a solve.
HISTORY_REFRESH_SECONDS = 600


def _viewer(request: HttpRequest) -> int:
    return request.user.pk if request.user.is_authenticated else 0


def _page(request: HttpRequest) -> tuple | None:
    """What a whole page shows around its live part (None: do not answer 304)."""
    if len(get_messages(request)):
        return None
    return (
        selectors.notifications_unread_count(user=request.user),
        request.COOKIES.get(settings.CSRF_COOKIE_NAME, ""),
        tuple(board_selectors.boards_visible().values_list("slug", "title")),
    )


def board_etag(request: HttpRequest, slug: str | None = None, fragment: bool = False) -> str | None:
    board = (
        board_selectors.board_default()
        if slug is None
        else board_selectors.boards_visible().filter(slug=slug).first()
    )
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
        live.board_version(board.slug),
        today(),
        sorted(request.GET.lists()),
        _viewer(request),
    ]
    if request.GET.get("view") == "following":
        parts.append(selectors.follows_fingerprint(user=request.user))
    if not fragment:
        page = _page(request)
        if page is None:
            return None
        parts.append(page)
    return live.etag(*parts)


def profile_etag(request: HttpRequest, handle: str, fragment: bool = False) -> str | None:
    programmer = board_selectors.programmer_by_handle(handle)
    if programmer is None:
        return None
    versions = live.board_versions(board_selectors.boards_visible().values_list("slug", flat=True))
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
        int(time.time() // HISTORY_REFRESH_SECONDS),
        _viewer(request),
    ]
    if not programmer.on_boards:
        # Their solves leave the boards (and so the versions) alone but still list here.
        parts.append(solutions_mongo.solves().count_documents({"programmer_id": programmer.pk}))
    if not fragment:
        page = _page(request)
        if page is None:
            return None
        following = selectors.is_following(user=request.user, programmer=programmer)
        parts += [page, following, selectors.followers_count(programmer=programmer)]
    return live.etag(*parts)

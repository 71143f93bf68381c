"""What activity adds to the pages of `solutions`, through its extension points (registered by
`ActivityConfig.ready()`; see `solutions/extensions.py`). The parts that only show something —
charts, the follow button, the followers count — are template tags instead
(`templatetags/activity_extras.py`).

- The board's rows get their arrows: the places moved since the previous day's final board.
  Arrows depend on the board day only, so they are computed once per board version with the rows.
- `?view=following` ranks the people the viewer follows, with their global ranks.
- The ETags of board and profile pages (and a competition's standings) also cover what this
  app shows there: the bell's unread count (whole pages), whom the viewer follows (the
  following view, the follow button), the followers count, and the rank history the charts
  draw, which the snapshots fill in the background.
"""

from __future__ import annotations

import time
from collections.abc import Hashable

from django.http import HttpRequest

from solutions import extensions
from solutions import selectors as board_selectors
from solutions.models import Board, Programmer

from . import selectors

# Profiles chart rank history, which the snapshots fill in the background: their ETag also
# changes every few minutes, so a new history point shows up without waiting for a solve.
HISTORY_REFRESH_SECONDS = 600


def board_rows_with_moves(*, page: board_selectors.BoardPage, rows: list) -> list:
    return selectors.board_moves(page, rows=rows)


def following_rows(*, board: Board, user, day: int) -> list[board_selectors.Row] | None:
    """The following view's rows; None asks an anonymous viewer to log in."""
    if not user.is_authenticated:
        return None
    return selectors.following_rows(board=board, user=user, day=day)


def following_people(*, user) -> set[int] | None:
    """The ids of the people the user follows, and the user's own; None for an anonymous
    viewer (who must log in to follow anybody)."""
    if not user.is_authenticated:
        return None
    return selectors.following_ids(user=user)


def page_part(
    *, request: HttpRequest, page: str, fragment: bool, subject: Board | Programmer | object
) -> Hashable:
    """Everything this app shows on a board, profile or standings response, for this viewer."""
    user = request.user
    parts: list[Hashable] = []
    if not fragment:
        parts.append(selectors.notifications_unread_count(user=user))
    if page in ("board", "standings") and request.GET.get("view") == "following":
        parts.append(selectors.follows_fingerprint(user=user))
    if page == "profile":
        parts.append(int(time.time() // HISTORY_REFRESH_SECONDS))
        if not fragment:
            parts.append(selectors.is_following(user=user, programmer=subject))
            parts.append(selectors.followers_count(programmer=subject))
    return tuple(parts)


def register() -> None:
    extensions.board_rows_decorator(board_rows_with_moves)
    extensions.board_view(extensions.BoardView(name="following", rows=following_rows))
    extensions.people_view("following", following_people)
    extensions.page_fingerprint_part(page_part)

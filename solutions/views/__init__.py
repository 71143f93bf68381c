"""The pages, a module a concern: each view decorates, validates, calls one selector, service or
presenter (`solutions.board_pages` for the board page) and renders.

`programmer_of` is here because every page and the apps built on `solutions` ask it.
"""

from __future__ import annotations

from django.http import HttpRequest

from ..models import Programmer


def programmer_of(request: HttpRequest) -> Programmer | None:
    """The signed-in user's programmer (staff accounts may have none)."""
    if not request.user.is_authenticated:
        return None
    return getattr(request.user, "programmer", None)

"""The bell in the header: the signed-in user's unread notification count, read only when a
template shows it."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from . import selectors


def notifications(request: HttpRequest) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"unread_notifications": 0}
    return {
        "unread_notifications": SimpleLazyObject(
            lambda: selectors.notifications_unread_count(user=user)
        )
    }

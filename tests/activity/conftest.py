"""Fixtures and helpers of the activity tests (live boards, history, alerts).

More personas beside Alice, Bob and Charlie: Dave, Erin, Frank and Grace are programmers who
only ever appear to overtake somebody.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from activity.models import AlertPreferences, AlertRule, Follow
from solutions import services
from tests.conftest import make_programmer


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """Personas are made with passwords; hashing them for real is slow and beside the point."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def activity_db(mongodb):
    """The embedded server (its fixture applies every app's indexes, the activity ones too)."""
    return mongodb


@pytest.fixture
def rivals(db):
    """Four programmers who will overtake the others."""
    return [make_programmer(handle) for handle in ("dave", "erin", "frank", "grace")]


def solve(programmer, problem, at: dt.datetime | None = None) -> bool:
    return services.solve_record(
        programmer=programmer, problem=problem, solved_at=at or timezone.now()
    )


def solve_many(programmer, problems) -> None:
    for problem in problems:
        assert solve(programmer, problem)


def opt_in(programmer_or_user, *, own: bool = False, followed: bool = False) -> None:
    user = getattr(programmer_or_user, "user", programmer_or_user)
    user.email = f"{user.username}@example.com"
    user.save()
    AlertPreferences.objects.update_or_create(
        user=user, defaults={"my_rank_drops": own, "followed_rank_drops": followed}
    )


def follow(follower, followed) -> Follow:
    return Follow.objects.create(follower=follower.user, followed=followed)


def alert_rule(board, *, places: int = 3, minutes: int = 60, enabled: bool = True) -> AlertRule:
    return AlertRule.objects.create(board=board, enabled=enabled, places=places, minutes=minutes)

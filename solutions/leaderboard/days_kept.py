"""The days the engine keeps, counted back from today in the leaderboard's time zone: the final
boards of past days (`history_from`), the daily counts a late solve can still need
(`counts_from`), and a streak board's recent solve days (`streaks_from`). Entries are trimmed to
them and orders older than the history are pruned.
"""

from __future__ import annotations

from django.conf import settings
from django.utils import timezone

from . import maths


def history_from(today: int) -> int:
    """The oldest day whose final board is kept."""
    return today - settings.LEADERBOARD_HISTORY_DAYS


def counts_from(window: maths.Window, today: int) -> int:
    """The oldest daily count that a solve accepted today can still need."""
    return today - settings.LEADERBOARD_MAX_LATE_DAYS - window.span


def streaks_from(today: int) -> int:
    """The oldest solve day a streak board's entry keeps (see `maths.streak_scores`): the day
    before the oldest a solve accepted today can be on, and one more for a solve checked before
    midnight and counted after it."""
    return today - settings.LEADERBOARD_MAX_LATE_DAYS - 2


def current_day() -> int:
    """Today's epoch day in the leaderboard's time zone."""
    return maths.epoch_day(timezone.now(), settings.LEADERBOARD_TIME_ZONE)

"""The days the engine keeps, counted back from today in the leaderboard's time zone: the final
boards of past days (`history_from`), the daily counts a late solve can still need
(`counts_from`), and a streak board's recent solve days (`streaks_from`). Entries are trimmed to
them and orders older than the history are pruned. Forward, the orders reach the frontier
(`frontier_wanted`): today, and tomorrow in the last PREPARE_AHEAD of today.
"""

from __future__ import annotations

import datetime as dt

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


# Tomorrow's orders are made this long before midnight (see `day_change`), so that a board read
# at midnight reads orders made already. Until then a solve moves its programmer in today's orders
# alone; from then on in tomorrow's too.
PREPARE_AHEAD = dt.timedelta(hours=1)


def frontier_wanted() -> int:
    """The last day whose orders the engine keeps by now: today, or tomorrow once it is less than
    PREPARE_AHEAD away."""
    return maths.epoch_day(timezone.now() + PREPARE_AHEAD, settings.LEADERBOARD_TIME_ZONE)


def day_start(day: int) -> dt.datetime:
    """The first moment of an epoch day in the leaderboard's time zone."""
    return maths.day_start(day, settings.LEADERBOARD_TIME_ZONE)

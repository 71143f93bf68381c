"""Solve days and streaks: pure functions of a programmer's solve days. No I/O.

Definitions (the profile, the API and the tests use exactly these):

- A **solve day** of a programmer is a day (an epoch day in the leaderboard time zone) with at
  least one counted solve: the first accepted solve of a problem, as the boards count it (the
  `solves` log holds exactly those).
- The **current streak on day D** is the number of consecutive solve days ending at D; when D is
  not a solve day, ending at D-1 (a streak stays alive until the end of the next day); 0 when
  neither is. So a streak that ended yesterday still shows today, and is 0 the day after.
- The **longest streak** is the largest number of consecutive solve days ever.
- A late solve (reported after its day, within LEADERBOARD_MAX_LATE_DAYS) counts on its own day:
  it can join two streaks into one, and the values of past days change with it. Nothing here is
  stored, so that needs no care: every answer is computed from the days as they are now.

The year on a profile is the last YEAR_DAYS days up to today, both ends included.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Collection, Iterable

from .maths import epoch_day

YEAR_DAYS = 365


def solve_days(moments: Iterable[dt.datetime], time_zone: str) -> Counter[int]:
    """{epoch day: how many solves} of these solve times, in `time_zone`."""
    return Counter(epoch_day(moment, time_zone) for moment in moments)


def streak_ending(days: Collection[int], last: int) -> int:
    """The number of consecutive solve days ending at `last` (0 if it is not one)."""
    length = 0
    while last - length in days:
        length += 1
    return length


def current_streak(days: Collection[int], today: int) -> int:
    """The current streak on `today`: ending today, or yesterday when today has no solve yet."""
    return streak_ending(days, today) or streak_ending(days, today - 1)


def longest_streak(days: Collection[int]) -> int:
    """The longest run of consecutive solve days: each run is walked once, back from its last
    day (a solve day whose next day is not one), so this is linear in the days."""
    return max(
        (streak_ending(days, end) for end in days if end + 1 not in days),
        default=0,
    )


def year_first_day(today: int) -> int:
    """The first day of the year shown on `today` (YEAR_DAYS days, today included)."""
    return today - YEAR_DAYS + 1

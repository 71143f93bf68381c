"""The leaderboard maths: epoch days, windows, forward-dated sums, sort keys and ranks. No I/O.

The algorithm (from "Making a Real-time 'Last N Days' Leaderboard with MongoDB Aggregation
Framework"): every programmer's entry keeps **daily counts keyed by epoch day** (days since
1970-01-01 in the leaderboard time zone). A solve on day d changes the score of every board day
whose window contains d; for a rolling window of N days those are d, d+1, ..., d+N-1. So each solve
recomputes those N **forward-dated sums** at once: the score for day d over the last N days, for
d+1 over the last N-1 of them, and so on. Reading the board of day D is then one indexed query on
`sums.D`; a programmer who stops solving drops off by themselves, because no later day has a sum
for them. Sums for days after today are a forecast ("if you solve nothing more, you will have 14
tomorrow"), and a late solve recomputes the past days it touches, so the sum of a past day is that
day's final board.

Calendar windows (week starting Monday, month) work the same way: a solve on day d changes the
days from d to the end of its period. All-time boards have a single running total (key ``all``).

Ties: scores rank with standard competition ranking (1, 2, 2, 4: one plus the number of strictly
better scores), and inside a tie whoever reached the score earlier is listed first, then by
handle. To let one index serve both the order and keyset pagination, each entry also keeps a
**sort key** per day that packs the score and the time it was reached into one int64:
``score << 32 | (2**32 - 1 - seconds since 2020)``. A bigger key is a better place.

Streak boards (see `streak_scores`) rank by the current streak of consecutive solve days instead
of a sum, forward-dated the same way, or all time by the longest streak.

Best-score boards (see `best_total`) rank by the sum, over problems, of each problem's best
reported score inside the day's window, forward-dated the same way; the total was reached when
the last of those bests was first reported.
"""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from zoneinfo import ZoneInfo

ROLLING = "rolling"
WEEK = "week"
MONTH = "month"
ALL_TIME = "all_time"
ALL_TIME_KEY = "all"

EPOCH = dt.date(1970, 1, 1)
KEY_EPOCH = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
TIME_BITS = 32
MAX_SCORE = 2**30 - 1  # keeps score << 32 inside a signed int64
# A streak on day D is known on D for D and D+1 (alive until the end of the next day); on D+2 it
# is 0 unless they solve: a streak board's day is forward-dated this many days.
STREAK_DAYS = 2


@dataclass(frozen=True)
class Window:
    """Which solves count towards a board's score on a given day."""

    kind: str
    days: int = 7
    # The score is a streak of solve days, not a sum: the current streak of each day (a rolling
    # window of STREAK_DAYS: the days a solve's streak is known ahead), or all time the longest.
    streak: bool = False
    # The score is the sum of each problem's best reported score inside the window (`best_total`),
    # counted from the `scores` log instead of the solves.
    best: bool = False

    def start(self, day: int) -> int:
        """The first epoch day counted by the board of `day`."""
        if self.kind == ROLLING:
            return day - self.days + 1
        if self.kind == WEEK:
            return day - day_to_date(day).weekday()
        if self.kind == MONTH:
            return date_to_day(day_to_date(day).replace(day=1))
        raise ValueError(f"{self.kind} windows have no start day")

    def end(self, day: int) -> int:
        """The last board day whose score a solve on `day` changes."""
        if self.kind == ROLLING:
            return day + self.days - 1
        if self.kind == WEEK:
            return day + 6 - day_to_date(day).weekday()
        if self.kind == MONTH:
            date = day_to_date(day)
            return day + calendar.monthrange(date.year, date.month)[1] - date.day
        raise ValueError(f"{self.kind} windows have no end day")

    def affected_days(self, day: int) -> list[int]:
        """The board days whose score a solve on `day` changes (the forward-dated sums)."""
        return list(range(day, self.end(day) + 1))

    def days_moving(self, day: int) -> list[int]:
        """The solve days whose programmers' scores may change from the day before `day` to
        `day`, before anybody solves on it: a rolling window's oldest day leaves it (and `day`
        itself, which a judge's clock running ahead can have solves on already); a calendar
        period changes nobody's within it and starts afresh (`starts_period`)."""
        if self.kind == ROLLING:
            return [day - self.days, day]
        return [] if self.is_all_time else [day]

    def starts_period(self, day: int) -> bool:
        """Whether `day` is a calendar period's first, whose board starts empty."""
        return self.kind in (WEEK, MONTH) and self.start(day) == day

    @property
    def span(self) -> int:
        """The most days one board day can count."""
        return {ROLLING: self.days, WEEK: 7, MONTH: 31}.get(self.kind, 0)

    @property
    def is_all_time(self) -> bool:
        return self.kind == ALL_TIME


def date_to_day(date: dt.date) -> int:
    return (date - EPOCH).days


def day_to_date(day: int) -> dt.date:
    return EPOCH + dt.timedelta(days=day)


def day_start(day: int, time_zone: str) -> dt.datetime:
    """The first moment of an epoch day in the leaderboard time zone (aware, in UTC)."""
    midnight = dt.datetime.combine(day_to_date(day), dt.time(), tzinfo=ZoneInfo(time_zone))
    return midnight.astimezone(dt.UTC)


def epoch_day(moment: dt.datetime, time_zone: str) -> int:
    """The epoch day of an aware moment, in the leaderboard time zone."""
    return date_to_day(moment.astimezone(ZoneInfo(time_zone)).date())


def window_sums(daily: Mapping[int, int], window: Window, days: Iterable[int]) -> dict[int, int]:
    """The score on each of `days`: the sum of the daily counts inside that day's window."""
    return {day: sum(n for d, n in daily.items() if window.start(day) <= d <= day) for day in days}


def reached_at(latest: Mapping[int, dt.datetime], window: Window, day: int) -> dt.datetime | None:
    """When the score of `day` was reached: the latest solve counted in that day's window."""
    counted = [t for d, t in latest.items() if window.start(day) <= d <= day]
    return max(counted) if counted else None


def sort_key(score: int, reached: dt.datetime) -> int:
    """One int64 ordering places: higher score first, then whoever reached it earlier."""
    seconds = int((reached - KEY_EPOCH).total_seconds())
    return min(score, MAX_SCORE) << TIME_BITS | (2**TIME_BITS - 1 - seconds)


def key_score(key: int) -> int:
    return key >> TIME_BITS


def score_floor_key(score: int) -> int:
    """The smallest sort key a score can have: keys of better scores are all above it."""
    return score << TIME_BITS


# The histograms below are exact, or exact at the scores asked: a day with more distinct scores
# than a root holds counts buckets, and a reader cuts the buckets it needs at those scores
# (`reading.OrderView.histogram_at`); `score_at_offset` needs an exact one.


def shared_rank(histogram: Mapping[int, int], score: int) -> int:
    """Standard competition ranking: 1 + the number of programmers with a strictly better score."""
    return 1 + sum(count for other, count in histogram.items() if other > score)


def at_or_above(histogram: Mapping[int, int], score: int) -> int:
    """How many programmers have this score or a better one: a tie counts whole (the rank
    tiers use it, so three tied first of 216 are the top 3 of 216, not the top 1)."""
    return sum(count for other, count in histogram.items() if other >= score)


def board_total(histogram: Mapping[int, int]) -> int:
    """How many programmers are on the board (a score above zero)."""
    return sum(count for score, count in histogram.items() if score > 0)


def score_at_offset(histogram: Mapping[int, int], offset: int) -> tuple[int, int] | None:
    """The score held by the programmer at 0-based `offset` of the board, and how many rank above
    that whole score. None when the board is shorter. Of an exact histogram only (a bucket
    knows no score of its own: the record at the offset does)."""
    above = 0
    for score in sorted((s for s, n in histogram.items() if s > 0 and n > 0), reverse=True):
        if offset < above + histogram[score]:
            return score, above
        above += histogram[score]
    return None


def percentile(rank: int, total: int) -> float:
    """The share of the board at or below this rank, as a percentage (the top is 100)."""
    if total <= 0:
        return 0.0
    return round(100.0 * (total - rank + 1) / total, 1)


# --- streaks ------------------------------------------------------------------------------------


def streak_window(*, all_time: bool) -> Window:
    """The window of a streak board: the current streak of each day, or the longest ever."""
    return Window(ALL_TIME, streak=True) if all_time else Window(ROLLING, STREAK_DAYS, streak=True)


def streak_starts(days: Iterable[int]) -> dict[int, int]:
    """{solve day: the first day of the run of consecutive solve days that holds it}."""
    starts: dict[int, int] = {}
    for day in sorted(days):
        starts[day] = starts.get(day - 1, day)
    return starts


def streak_scores(first: Mapping[int, dt.datetime]) -> dict[int, tuple[int, dt.datetime]]:
    """{day: (current streak on that day, when that length was reached)} of every day with a
    streak, from `first`: {solve day: the time of its first counted solve}.

    The definitions are `streaks`' (brute force, the tests compare): the current streak on day D
    is the number of consecutive solve days ending at D, or at D-1 when D is not a solve day
    (alive until the end of the next day), 0 when neither is (not listed here). Solve days come
    one after another, so a run of them reached its length on the first solve of its last day:
    that time is the tie-break (`sort_key`), the same for D and for D+1 when D+1 only keeps the
    run alive. A later first solve of a day cannot come earlier than its day, so a late solve
    that joins two runs makes the joined one reached on the first solve of its last day too.

    What an entry must keep to recompute these exactly as solves arrive, however long a streak
    runs (years): a solve is accepted at most LEADERBOARD_MAX_LATE_DAYS late, and a solve on day
    d changes only the days from d to the day after the end of the run that then holds d (days
    before d do not look at it, and the day after that is 0 as before, or the start of another
    run, which does not look back). Those days are known from the solve days from d-1 on, with
    their first times, and the first day of the run holding d-1 (`streak_starts`): so an entry
    keeps, for each solve day from LEADERBOARD_MAX_LATE_DAYS (and a little) before today, its
    first time and its run's first day, and nothing older: at most that many days, whatever the
    length of the streak. The scores of past days are kept like any board's final days.
    """
    starts = streak_starts(first)
    scores: dict[int, tuple[int, dt.datetime]] = {}
    for day, start in starts.items():
        scores[day] = (day - start + 1, first[day])
        if day + 1 not in starts:  # the day after a run keeps it alive
            scores[day + 1] = scores[day]
    return scores


def longest_streak_score(first: Mapping[int, dt.datetime]) -> tuple[int, dt.datetime] | None:
    """(the longest streak ever, when it was first reached) from `first` ({solve day: its first
    solve time}), None without solve days. Of several runs of that length, the one that reached
    it first counts (the earliest first solve of their last days). An entry keeps this best,
    and a solve compares it with the run that then holds its day: a run only grows, and at the
    same length its time only comes earlier, so the best of those is the best of the runs as
    they are now."""
    starts = streak_starts(first)
    best = min(((start - day - 1, first[day]) for day, start in starts.items()), default=None)
    return None if best is None else (-best[0], best[1])


# --- best scores --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """A scored report as a best-score board counts it: `value` is already "bigger is better"
    (a lower-is-better board turns a score into its limit minus the score)."""

    problem: str
    day: int
    value: int
    at: dt.datetime


def best_bucket(window: Window, day: int) -> int:
    """The day a report's best is kept under: its own, or 0 on an all-time board (one best a
    problem ever)."""
    return 0 if window.is_all_time else day


def best_better(value: int, at: dt.datetime, than: tuple[int, dt.datetime] | None) -> bool:
    """Whether a report (`value` at `at`) replaces a best: a bigger value, or the same one
    reported earlier (who reached the score first keeps it)."""
    return than is None or value > than[0] or (value == than[0] and at < than[1])


def best_total(
    reports: Iterable[Report], window: Window, day: int
) -> tuple[int, dt.datetime] | None:
    """(the sum of each problem's best value inside the window of `day`, when that total was
    reached: the latest of the moments each of those bests was first reported), None when no
    report is inside it. The definition the tests compare the boards with."""
    best: dict[str, tuple[int, dt.datetime]] = {}
    for report in reports:
        inside = window.is_all_time or window.start(day) <= report.day <= day
        if inside and best_better(report.value, report.at, best.get(report.problem)):
            best[report.problem] = (report.value, report.at)
    if not best:
        return None
    return sum(value for value, _ in best.values()), max(at for _, at in best.values())


def best_key(total: int, reached: dt.datetime) -> int:
    """The sort key of a best-score total: none (0, off the board) for a total of 0."""
    return sort_key(total, reached) if total > 0 else 0

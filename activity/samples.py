"""Rank samples and drops: the pure part of the rank-drop alerts. No I/O.

Every minute the alert job looks at the rank of each watched programmer. Storing every look
would cost one record per programmer per minute, so only **changes** are kept: a list of
``{"at": moment, "rank": rank or None}`` where each item holds until the next one. The rank held
at any moment is the last change at or before it.

A rule "a drop of at least X places within Y minutes" compares the current rank with the best
rank held at any moment of the last Y minutes: the rank held when the window opened, and every
change since. The drop is identified by the change that held that best rank (its time), so the
job, run again a minute later or retried after a crash, finds the same drop and the same key.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

Change = dict  # {"at": aware datetime, "rank": int | None}


@dataclass(frozen=True)
class Drop:
    best_rank: int
    best_at: dt.datetime
    rank: int

    @property
    def places(self) -> int:
        return self.rank - self.best_rank


def with_rank(changes: list[Change], rank: int | None, at: dt.datetime, keep: int) -> list[Change]:
    """The changes with the current rank added when it differs from the last one, `keep` long."""
    if changes and changes[-1]["rank"] == rank:
        return changes
    return [*changes, {"at": at, "rank": rank}][-keep:]


def rank_drop(changes: list[Change], now: dt.datetime, minutes: int) -> Drop | None:
    """How far the current rank is below the best rank held within the last `minutes`
    (None when the programmer is not on the board now, or nothing is known)."""
    if not changes or changes[-1]["rank"] is None:
        return None
    opened = now - dt.timedelta(minutes=minutes)
    before = [change for change in changes if change["at"] <= opened]
    held = [*before[-1:], *(change for change in changes if change["at"] > opened)]
    ranked = [change for change in held if change["rank"] is not None]
    # The best rank; among equal ones the latest, so a climb back up starts a new drop.
    best = min(ranked, key=lambda change: (change["rank"], -change["at"].timestamp()))
    return Drop(best_rank=best["rank"], best_at=best["at"], rank=changes[-1]["rank"])


def to_millis(moment: dt.datetime) -> dt.datetime:
    """The moment as MongoDB stores it (milliseconds), so what is compared is what was stored."""
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)

"""Held solves: accepted and logged, but kept off every public surface until a window closes.

A competition's freeze hides who solved what from the freeze time to the end: its public
standings show pending cells. A solve counted at once would tell the same on the boards (rank and
score), the profile's solved list and year, the activity API, the problem's solvers and count,
and search. So a solve whose time falls in a **hold window** of its problem (the apps above
`solutions` declare them through `extensions.solve_holds`; competitions: from a freeze to the
end) is **held**:

- it is logged in `solves` as usual (the unique key still makes the first report win, and that
  request is answered ``counted: true``: it is accepted and will count), with
  ``held_until: <the window's end>``, already ``applied`` and with no move into its problem's
  count: neither the boards nor the problems' counts take it (`services.solves.solve_apply`,
  the recounts from the log and the resyncs of hides and returns all leave it out);
- every read of the log a public page shows leaves it out (`SHOWN`); staff see it on profiles;
- it is **released** by `services.solves_release` (beat runs it every minute with the
  competitions' archive task, and every 5 minutes with the repair task): the windows are asked
  again (staff may have ended the competition early or moved its end), the field is removed and
  the programmer's entries are recomputed from the log, as the repair does, so it counts exactly
  once, on the boards of its own day (its real time), however long after the solve the release
  runs. Until then it stays hidden, even past the window's end: every surface shows it at the
  same moment, within a minute of the end while beat runs.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from django.utils import timezone

from . import extensions

HELD_UNTIL = "held_until"  # the field of a held solve in `solves`
HELD = {HELD_UNTIL: {"$exists": True}}  # as a query of the log: the held solves
SHOWN = {HELD_UNTIL: {"$exists": False}}  # the solves the public pages show and the boards count


def is_held(solve: dict) -> bool:
    return HELD_UNTIL in solve


def held_until(*, problem: str, solved_at: dt.datetime) -> dt.datetime | None:
    """Until when a solve of `problem` at `solved_at` is held, None when it counts at once (no
    window holds that moment, or it has closed already: a late report after the end)."""
    windows = extensions.solve_holds_of(problems=[problem], now=timezone.now())
    return _until(windows.get(problem, []), solved_at)


def still_held(solves: Iterable[dict]) -> dict:
    """{solve id: held until} of these held solves (with their problem and time) that some
    window still holds now, as the windows are now (one question for all of them)."""
    solves = list(solves)
    windows = extensions.solve_holds_of(
        problems={solve["problem"] for solve in solves}, now=timezone.now()
    )
    until = {s["_id"]: _until(windows.get(s["problem"], []), s["solved_at"]) for s in solves}
    return {solve_id: end for solve_id, end in until.items() if end is not None}


def _until(windows: list[tuple[dt.datetime, dt.datetime]], at: dt.datetime) -> dt.datetime | None:
    """The latest end of the windows holding `at` (they all close after now), to the
    millisecond, as MongoDB keeps it."""
    end = max((end for start, end in windows if start <= at < end), default=None)
    return None if end is None else end.replace(microsecond=end.microsecond // 1000 * 1000)

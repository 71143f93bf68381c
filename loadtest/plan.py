"""The contest day's world and the shape of its load, defined once.

The seed builds this world, the Locust users act in it and the verdict recomputes it, so all
three read it from here: handles, groups, problems and their answers, the competition, and how
hard the judges push at each moment of the run. Everything is a pure function of the run's
settings (no I/O), so the verdict can rebuild the seeded history exactly.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

COUNTRIES = ["BD", "IN", "US", "BR", "CN", "RU", "PL", "JP", "VN", "EG", "NG", "DE"]
ORGANIZATIONS = [f"University {n}" for n in range(1, 13)] + ["Acme", "Initech", "Hooli"]
PRACTICE_PROBLEMS = [f"practice-{n:02d}" for n in range(1, 41)]
CONTEST_LETTERS = "abcdefgh"
CONTEST_PROBLEMS = [f"contest-{letter}" for letter in CONTEST_LETTERS]
HISTORY_DAYS = 30  # a month of history before the run
CONTESTANTS = 400  # the programmers the judges report competition verdicts for
WATCHERS = 20  # programmers with an account who asked for rank-drop alerts
JUDGES = 8
CONNECTIONS_PER_JUDGE = 4  # a judge's workers, each one request at a time
VIEWERS = 500
FORM_PROGRAMMERS = 50
PASSWORD = "contest-day-password-7"  # every account the run makes (the abuser never has it)
POLL_SECONDS = 3.0  # live.js while the tab is in use
ALERT_PLACES = 3
ALERT_MINUTES = 10


def answer_of(slug: str) -> str:
    """The right answer of a problem the seed creates."""
    return f"answer-{slug}"


def handle_of(n: int) -> str:
    return f"coder{n:06d}"


def groups_of(n: int) -> tuple[str, str]:
    """(country, organization) of programmer n: most have a country, about half an organization."""
    rng = random.Random(f"groups-{n}")
    country = rng.choice(COUNTRIES) if rng.random() < 0.85 else ""
    organization = rng.choice(ORGANIZATIONS) if rng.random() < 0.5 else ""
    return country, organization


def history(programmers: int, run_start: dt.datetime) -> list[dict]:
    """A month of solves before the run, as `import_solves` lines: each programmer solved up to
    8 practice problems, each on one day of the last HISTORY_DAYS (some earlier today)."""
    rng = random.Random(f"history-{programmers}")
    lines = []
    for n in range(programmers):
        for slug in rng.sample(PRACTICE_PROBLEMS, rng.randrange(0, 9)):
            back = dt.timedelta(seconds=rng.randrange(60, HISTORY_DAYS * 86400))
            lines.append(
                {
                    "id": f"history-{n}-{slug}",
                    "programmer": handle_of(n),
                    "problem": slug,
                    "solved_at": (run_start - back).isoformat(),
                }
            )
    return lines


@dataclass
class World:
    """What the seed made that the load and the verdict need (written to world.json)."""

    base_url: str
    programmers: int
    run_start: str  # ISO times, UTC
    run_end: str
    competition: str
    competition_start: str
    competition_freeze: str
    competition_end: str
    tokens: list[str] = field(default_factory=list)
    watchers: list[str] = field(default_factory=list)
    log_dir: str = ""

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2))

    @classmethod
    def load(cls, path: Path) -> World:
        return cls(**json.loads(path.read_text()))

    def time(self, name: str) -> dt.datetime:
        return dt.datetime.fromisoformat(getattr(self, name))


def competition_times(run_start: dt.datetime, minutes: float) -> tuple[dt.datetime, ...]:
    """(start, freeze, end): it starts with the run, freezes at 70% of it and ends 45 s after
    the load stops, so the judges' last verdicts (retried after the load) still count in it."""
    start = run_start - dt.timedelta(seconds=30)
    freeze = run_start + dt.timedelta(minutes=minutes * 0.7)
    end = run_start + dt.timedelta(minutes=minutes, seconds=45)
    return start, freeze, end


def judge_rate(elapsed: float, total: float) -> float:
    """Accepted-solve reports per second the judges aim at, `elapsed` seconds into a run of
    `total`: a burst in the first and last 15% (everybody solves A at the start and submits in
    a hurry at the end), a steady middle."""
    share = elapsed / total if total else 1.0
    if share < 0.15 or share > 0.85:
        return 40.0
    return 15.0

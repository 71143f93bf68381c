"""ICPC-style standings: penalty arithmetic, ordering, shared ranks, first solvers. No I/O.

For each (programmer, problem) only the attempts up to the first accepted one count. A solved
problem costs its **solve minute** (whole minutes from the start to the accepted attempt) plus
**20 minutes for every rejected attempt before it**; unsolved problems cost nothing. Programmers
rank by problems solved (more is better), then by penalty (less is better), then by the minute of
their last accepted attempt (earlier is better). Equal on all three, they share a rank (1, 2, 2, 4)
and are listed by handle. The first programmer to solve a problem, to the second, is marked.

Freeze and the "own results" view are a filter on the attempts before this runs: the public view
takes the attempts before the freeze time, a programmer's own view adds all of their own. The
attempts held back by the freeze still show, as ICPC scoreboards do, as **pending** tries on the
cells they would change (a "?" with the number of tries): the public learns that somebody tried,
not whether it was right.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

PENALTY_PER_REJECTION = 20


@dataclass(frozen=True)
class Attempt:
    """One judged attempt, as the standings see it."""

    programmer_id: int
    problem: str
    accepted: bool
    at: dt.datetime


@dataclass
class Cell:
    """A programmer's result on one problem."""

    attempts: int = 0
    solved_minute: int | None = None
    solved_seconds: float | None = None  # exact, to find the first solver
    first: bool = False
    pending: int = 0  # attempts sent after the freeze, whose verdicts the viewer may not see

    @property
    def solved(self) -> bool:
        return self.solved_minute is not None

    @property
    def tries(self) -> int:
        """Every attempt that shows on the cell, judged or pending."""
        return self.attempts + self.pending

    @property
    def rejected_before(self) -> int:
        return self.attempts - 1 if self.solved else self.attempts

    def penalty(self) -> int:
        if not self.solved:
            return 0
        return self.solved_minute + PENALTY_PER_REJECTION * self.rejected_before

    def to_dict(self) -> dict:
        return {
            "attempts": self.attempts,
            "solved_minute": self.solved_minute,
            "solved_seconds": self.solved_seconds,
            "first": self.first,
            "pending": self.pending,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> Cell:
        return cls(
            attempts=data["attempts"],
            solved_minute=data["solved_minute"],
            solved_seconds=data.get("solved_seconds"),
            first=data.get("first", False),
            pending=data.get("pending", 0),  # archives made before pending counts have none
        )


@dataclass
class Row:
    """One line of the standings."""

    programmer_id: int
    handle: str
    cells: dict[str, Cell] = field(default_factory=dict)
    rank: int = 0

    @property
    def solved(self) -> int:
        return sum(1 for cell in self.cells.values() if cell.solved)

    @property
    def penalty(self) -> int:
        return sum(cell.penalty() for cell in self.cells.values())

    @property
    def last_minute(self) -> int:
        """The minute of the last accepted attempt (0 with none)."""
        return max((cell.solved_minute for cell in self.cells.values() if cell.solved), default=0)

    def order(self) -> tuple[int, int, int]:
        """The ranking key: equal keys share a rank."""
        return (-self.solved, self.penalty, self.last_minute)

    def to_dict(self) -> dict:
        return {
            "rank": self.rank,
            "programmer_id": self.programmer_id,
            "handle": self.handle,
            "solved": self.solved,
            "penalty": self.penalty,
            "problems": {slug: cell.to_dict() for slug, cell in self.cells.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> Row:
        return cls(
            programmer_id=data["programmer_id"],
            handle=data["handle"],
            cells={slug: Cell.from_dict(cell) for slug, cell in data["problems"].items()},
            rank=data["rank"],
        )


def solve_minute(start: dt.datetime, at: dt.datetime) -> int:
    """Whole minutes from the start (ICPC rounds down)."""
    return int((at - start).total_seconds() // 60)


def cells_from_attempts(
    attempts: Iterable[Attempt], start: dt.datetime, problems: Sequence[str]
) -> dict[int, dict[str, Cell]]:
    """Each programmer's cells from their attempts (taken in time order). Attempts after the
    first accepted one, and attempts on problems outside `problems`, do not count."""
    wanted = set(problems)
    cells: dict[int, dict[str, Cell]] = {}
    for attempt in sorted(attempts, key=lambda a: a.at):
        if attempt.problem not in wanted:
            continue
        row = cells.setdefault(attempt.programmer_id, {})
        cell = row.setdefault(attempt.problem, Cell())
        if cell.solved:
            continue
        cell.attempts += 1
        if attempt.accepted:
            cell.solved_minute = solve_minute(start, attempt.at)
            cell.solved_seconds = (attempt.at - start).total_seconds()
    return cells


def add_pending(
    cells: dict[int, dict[str, Cell]], held_back: Iterable[Attempt], problems: Sequence[str]
) -> None:
    """Count the attempts whose verdicts are held back (sent after the freeze) as pending on
    their cells, unless the cell is already solved: a later attempt cannot change it."""
    wanted = set(problems)
    for attempt in held_back:
        if attempt.problem not in wanted:
            continue
        cell = cells.setdefault(attempt.programmer_id, {}).setdefault(attempt.problem, Cell())
        if not cell.solved:
            cell.pending += 1


def rank_rows(rows: Iterable[Row], problems: Sequence[str]) -> list[Row]:
    """The rows in standings order with shared ranks and the first solver of each problem marked.

    Ranks are recomputed from the cells, so dropping a row (a hidden programmer) closes them up.
    """
    ordered = sorted(rows, key=lambda row: (row.order(), row.handle.lower()))
    previous, rank = None, 0
    for position, row in enumerate(ordered, start=1):
        if row.order() != previous:
            rank, previous = position, row.order()
        row.rank = rank
    for slug in problems:
        solved = [
            row.cells[slug] for row in ordered if slug in row.cells and row.cells[slug].solved
        ]
        earliest = min((cell.solved_seconds for cell in solved), default=None)
        for cell in solved:
            cell.first = cell.solved_seconds == earliest
    return ordered


def standings(
    attempts: Iterable[Attempt],
    *,
    start: dt.datetime,
    problems: Sequence[str],
    handles: Mapping[int, str],
    held_back: Iterable[Attempt] = (),
) -> list[Row]:
    """The ranked standings of everybody in `handles` (programmers left out of it do not show,
    and the ranks close up). Programmers without attempts show with nothing solved. Attempts
    `held_back` (by a freeze) show as pending and do not change any rank."""
    cells = cells_from_attempts(attempts, start, problems)
    add_pending(cells, held_back, problems)
    rows = [
        Row(programmer_id=pid, handle=handle, cells=cells.get(pid, {}))
        for pid, handle in handles.items()
    ]
    return rank_rows(rows, problems)

"""The competition's ICPC standings by brute force from the truth, beside what the site serves.

Both views are checked: the public frozen view while the competition runs (attempts from the
freeze on only show as pending), and the final one once it has ended.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable

from .. import plan
from .truth import Truth

PENALTY_PER_REJECTION = 20


def icpc_rows(
    attempts: Iterable[tuple], start: dt.datetime, freeze: dt.datetime | None, end: dt.datetime
) -> dict[str, dict]:
    """{handle: {"solved", "penalty", "rank", "problems": {slug: cell}}}, straight from the
    ICPC rules: attempts up to the first accepted one count; a solved problem costs its minute
    plus 20 per rejection before it; more solved, then less penalty, then an earlier last
    solve rank first, equals sharing a rank. With `freeze`, attempts from then on only show as
    pending on cells they could still change."""
    rows = {
        handle: {"key": _icpc_key(row), "problems": row}
        for handle, row in _icpc_cells(attempts, start, freeze, end).items()
    }
    keys = sorted(row["key"] for row in rows.values())
    for row in rows.values():
        row["rank"] = 1 + sum(1 for key in keys if key < row["key"])
    _first_solves_mark(rows)
    return rows


def _icpc_cells(
    attempts: Iterable[tuple], start: dt.datetime, freeze: dt.datetime | None, end: dt.datetime
) -> dict[str, dict[str, dict]]:
    """{handle: {problem: cell}} of the attempts from `start` to `end`, in time order: each
    counts until the problem is solved; from `freeze` on it is only pending."""
    cells: dict[str, dict[str, dict]] = defaultdict(dict)
    for handle, problem, accepted, at in sorted(attempts, key=lambda a: a[3]):
        if not start <= at < end or problem not in plan.CONTEST_PROBLEMS:
            continue
        cell = cells[handle].setdefault(
            problem, {"attempts": 0, "solved_minute": None, "seconds": None, "pending": 0}
        )
        if cell["solved_minute"] is not None:
            continue
        if freeze is not None and at >= freeze:
            cell["pending"] += 1
            continue
        cell["attempts"] += 1
        if accepted:
            cell["seconds"] = (at - start).total_seconds()
            cell["solved_minute"] = int(cell["seconds"] // 60)
    return cells


def _icpc_key(row: dict[str, dict]) -> tuple[int, int, int]:
    """The row's sort key: more solved, then less penalty, then an earlier last solve."""
    solved = [c for c in row.values() if c["solved_minute"] is not None]
    return (
        -len(solved),
        sum(c["solved_minute"] + PENALTY_PER_REJECTION * (c["attempts"] - 1) for c in solved),
        max((c["solved_minute"] for c in solved), default=0),
    )


def _first_solves_mark(rows: dict[str, dict]) -> None:
    """Mark the first solve of each problem (several, when solved in the same second)."""
    for problem in plan.CONTEST_PROBLEMS:
        times = [
            r["problems"][problem]["seconds"]
            for r in rows.values()
            if problem in r["problems"] and r["problems"][problem]["seconds"] is not None
        ]
        for r in rows.values():
            cell = r["problems"].get(problem)
            if cell is not None:
                cell["first"] = bool(times) and cell["seconds"] == min(times)


def compare_standings(view: str, expected: dict[str, dict], served: dict) -> list[str]:
    differences = []
    shown = {
        row["handle"]: row
        for row in served["rows"]
        if any(cell["attempts"] or cell["pending"] for cell in row["problems"].values())
    }
    if set(shown) != set(expected):
        missing, extra = set(expected) - set(shown), set(shown) - set(expected)
        differences.append(
            f"{view}: rows differ (missing {sorted(missing)[:5]}, extra {sorted(extra)[:5]})"
        )
    for handle in set(shown) & set(expected):
        want, got = expected[handle], shown[handle]
        if (
            want["rank"] != got["rank"]
            or -want["key"][0] != got["solved"]
            or (want["key"][1] != got["penalty"])
        ):
            differences.append(
                f"{view}: {handle} rank/solved/penalty {got['rank']}/"
                f"{got['solved']}/{got['penalty']}, expected {want['rank']}/"
                f"{-want['key'][0]}/{want['key'][1]}"
            )
            continue
        for problem, cell in want["problems"].items():
            served_cell = got["problems"].get(problem, {})
            fields = ("attempts", "solved_minute", "pending", "first")
            if any(served_cell.get(name) != cell[name] for name in fields):
                differences.append(f"{view}: {handle} {problem} {served_cell} != {cell}")
    return differences


def check_standings(truth: Truth, world: plan.World, session, *, final: bool) -> list[str]:
    served = session.get(
        f"{world.base_url}/api/v1/competitions/{world.competition}/standings", timeout=60
    ).json()
    start, freeze, end = (
        world.time(name) for name in ("competition_start", "competition_freeze", "competition_end")
    )
    view = "final standings" if final else "frozen standings"
    if served.get("final") != final or (not final and not served.get("frozen")):
        return [
            f"{view}: the site answered final={served.get('final')} frozen={served.get('frozen')}"
        ]
    expected = icpc_rows(truth.attempts, start, None if final else freeze, end)
    return compare_standings(view, expected, served)

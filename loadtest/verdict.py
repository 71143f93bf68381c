"""The contest day's verdict, from the load generator's own log (a Jepsen-style checker).

What the generator seeded (`history.jsonl`) and what the site acknowledged to it (`acks.jsonl`)
are the truth. From them alone this module recomputes, by brute force and without the engine's
code, every board of every day of the run (everybody, each country, each organization) and the
competition's ICPC standings (the public frozen view and the final one), then compares them
with what the site serves through its public API. It also reads `requests.jsonl` for the
report: latency per endpoint, errors, 503s and their Retry-After, the judges' throughput, and how
long the site took to answer normally again after each fault (`faults.jsonl`).

A (programmer, problem) counts once, on the day of the report the site said counted it
(`counted: true`); a form answer whose page was lost counts on the day it was sent. A pair
acknowledged by two reports that both said `counted: true` is counted twice; a programmer whose
all-time score is below the brute force lost solves, above it counted some twice.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import requests

from . import browser, plan

EPOCH = dt.date(1970, 1, 1)
PAGE_SIZE = 100
PENALTY_PER_REJECTION = 20
BUSY = "solves_busy"  # the API's refusal of a solve past SOLVES_CONCURRENT_MAX: send it again
NORMAL_AFTER_SECONDS = 5.0  # "answered normally again": this long without an error


def day_of(moment: dt.datetime | float | str) -> int:
    if isinstance(moment, (int, float)):
        moment = dt.datetime.fromtimestamp(moment, dt.UTC)
    elif isinstance(moment, str):
        moment = dt.datetime.fromisoformat(moment)
    return (moment.astimezone(dt.UTC).date() - EPOCH).days


def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --- the truth, from the log ------------------------------------------------------------------


@dataclass
class Truth:
    """What the load generator knows happened."""

    solve_day: dict[tuple[str, str], int] = field(default_factory=dict)
    groups: dict[str, tuple[str, str]] = field(default_factory=dict)
    attempts: list[tuple[str, str, bool, dt.datetime]] = field(default_factory=list)
    acknowledged: int = 0  # solves the site acknowledged (API answers and accepted forms)
    counted_twice: int = 0  # pairs two reports were both told counted
    unanswered: int = 0  # reports sent and never answered (the driver retries them all)
    refused: int = 0


def truth_from_log(world: plan.World, run_dir: Path) -> Truth:
    truth = Truth()
    for n in range(world.programmers):
        truth.groups[plan.handle_of(n)] = plan.groups_of(n)
    for line in read_jsonl(run_dir / "history.jsonl"):
        truth.solve_day[(line["programmer"], line["problem"])] = day_of(line["solved_at"])
    acks = read_jsonl(run_dir / "acks.jsonl")
    counted = Counter()
    uncertain: dict[tuple[str, str], int] = {}
    answered_ids = set()
    for record in acks:
        event = record["event"]
        if event == "signup":
            truth.groups[record["handle"]] = (record["country"], "")
        elif event == "answered":
            answered_ids.add(record["body"]["id"])
            _take_answer(truth, record, counted, uncertain)
        elif event == "refused":
            answered_ids.add(record["body"]["id"])
            truth.refused += 1
        elif event == "form-accepted":
            truth.acknowledged += 1
            pair, day = (record["handle"], record["problem"]), day_of(record["at"])
            if record["counted"]:
                counted[pair] += 1
                truth.solve_day.setdefault(pair, day)
            else:
                uncertain[pair] = min(day, uncertain.get(pair, day))
    sent = {record["body"]["id"] for record in acks if record["event"] == "sent"}
    truth.unanswered = len(sent - answered_ids)
    truth.counted_twice = sum(n - 1 for n in counted.values() if n > 1)
    for pair, day in uncertain.items():  # said "already solved": counted by a lost answer
        truth.solve_day.setdefault(pair, day)
    return truth


def _take_answer(truth: Truth, record: dict, counted: Counter, uncertain: dict) -> None:
    body, answer = record["body"], record["answer"]
    if record["path"].endswith("/submissions"):
        at = dt.datetime.fromisoformat(body["submitted_at"])
        accepted = body["verdict"] == "accepted"
        truth.attempts.append((body["programmer"], body["problem"], accepted, at))
        if not accepted:
            return
    else:
        at = dt.datetime.fromisoformat(body["solved_at"])
    truth.acknowledged += 1
    pair = (body["programmer"], body["problem"])
    if answer.get("counted"):
        counted[pair] += 1
        truth.solve_day[pair] = day_of(at)
    else:
        uncertain[pair] = min(day_of(at), uncertain.get(pair, day_of(at)))


# --- boards: brute force and the site -----------------------------------------------------------


def expected_scores(truth: Truth, board: dict, day: int, scope: tuple[str, str]) -> dict[str, int]:
    """{handle: score > 0} of a board day, straight from the definition."""
    if board["metric"] == "streak":
        return expected_streaks(truth, board, day, scope)
    first = -(10**9) if board["window"] == "all_time" else day - board["window_days"] + 1
    per_solve = 100 if board["metric"] == "points" else 1
    scores: Counter = Counter()
    for (handle, _), solved_on in truth.solve_day.items():
        if first <= solved_on <= day and _in_scope(truth.groups.get(handle, ("", "")), scope):
            scores[handle] += per_solve
    return dict(scores)


def expected_streaks(truth: Truth, board: dict, day: int, scope: tuple[str, str]) -> dict[str, int]:
    """{handle: streak > 0} of a streak board's day: on a rolling board the current streak (the
    consecutive solve days ending on the day, or on the day before when it has none), all time
    the longest run of consecutive solve days."""
    solve_days: defaultdict[str, set[int]] = defaultdict(set)
    for (handle, _), solved_on in truth.solve_day.items():
        if _in_scope(truth.groups.get(handle, ("", "")), scope):
            solve_days[handle].add(solved_on)
    scores = {}
    for handle, days in solve_days.items():
        if board["window"] == "all_time":
            score = max(_run_ending(days, last) for last in days)
        else:
            score = _run_ending(days, day) or _run_ending(days, day - 1)
        if score:
            scores[handle] = score
    return scores


def _run_ending(days: set[int], last: int) -> int:
    length = 0
    while last - length in days:
        length += 1
    return length


def _in_scope(groups: tuple[str, str], scope: tuple[str, str]) -> bool:
    kind, name = scope
    if kind == "everybody":
        return True
    return groups[0] == name if kind == "country" else groups[1] == name


def shared_ranks(scores: dict[str, int]) -> dict[str, int]:
    """Standard competition ranking: one plus the number of strictly better scores."""
    rank_of: dict[int, int] = {}
    for position, score in enumerate(sorted(scores.values(), reverse=True)):
        rank_of.setdefault(score, position + 1)
    return {handle: rank_of[score] for handle, score in scores.items()}


def site_board(
    session: requests.Session, base: str, slug: str, day: int | None, scope: tuple[str, str]
) -> list[dict]:
    params: dict = {"page_size": PAGE_SIZE}
    if day is not None:
        params["date"] = (EPOCH + dt.timedelta(days=day)).isoformat()
    if scope[0] == "country":
        params["country"] = scope[1]
    elif scope[0] == "org":
        params["org"] = scope[1]
    rows, page = [], 1
    while True:
        answer = session.get(
            f"{base}/api/v1/boards/{slug}", params={**params, "page": page}, timeout=60
        )
        answer.raise_for_status()
        entries = answer.json()["entries"]
        rows += entries
        if len(entries) < PAGE_SIZE:
            return rows
        page += 1


@dataclass
class BoardCheck:
    checked: int = 0
    differences: list[str] = field(default_factory=list)
    lost: int = 0
    counted_twice: int = 0


def check_boards(truth: Truth, world: plan.World, session: requests.Session) -> BoardCheck:
    check = BoardCheck()
    boards = session.get(f"{world.base_url}/api/v1/boards", timeout=30).json()["boards"]
    scopes = (
        [("everybody", "")]
        + [("country", c) for c in plan.COUNTRIES]
        + [("org", o) for o in plan.ORGANIZATIONS]
    )
    for board in boards:
        for day in board_days(world, board):
            for scope in scopes:
                expected = expected_scores(truth, board, day, scope)
                rows = site_board(
                    session,
                    world.base_url,
                    board["slug"],
                    None if board["window"] == "all_time" else day,
                    scope,
                )
                check.checked += 1
                check.differences += _compare(board, day, scope, expected, rows)
                if board["window"] == "all_time" and scope[0] == "everybody":
                    if board["metric"] != "streak":  # a count of solves, unlike a streak
                        _count_lost_and_twice(check, board, expected, rows)
    return check


def board_days(world: plan.World, board: dict) -> list[int]:
    """Every day the run touched, and the day before it (the late solves' day)."""
    if board["window"] == "all_time":
        return [day_of(dt.datetime.now(dt.UTC))]
    first = day_of(world.time("run_start")) - 1
    return list(range(first, day_of(dt.datetime.now(dt.UTC)) + 1))


def _compare(board: dict, day: int, scope: tuple, expected: dict, rows: list[dict]) -> list[str]:
    where = f"{board['slug']} day {day} {scope[0]} {scope[1]}".rstrip()
    got = {row["handle"]: (row["rank"], row["score"]) for row in rows}
    ranks = shared_ranks(expected)
    want = {handle: (ranks[handle], score) for handle, score in expected.items()}
    differences = []
    if board.get("ties", "shared") == "shared" and got != want:
        wrong = sorted(set(got.items()) ^ set(want.items()))[:5]
        differences.append(
            f"{where}: {len(set(got.items()) ^ set(want.items()))} rows differ, e.g. {wrong}"
        )
    if [row["rank"] for row in rows] != sorted(row["rank"] for row in rows):
        differences.append(f"{where}: rows are not in rank order")
    if len(rows) != len(got):
        differences.append(f"{where}: a programmer is listed twice")
    return differences


def _count_lost_and_twice(check: BoardCheck, board: dict, expected: dict, rows: list) -> None:
    per_solve = 100 if board["metric"] == "points" else 1
    got = {row["handle"]: row["score"] for row in rows}
    for handle in set(got) | set(expected):
        difference = (got.get(handle, 0) - expected.get(handle, 0)) // per_solve
        check.lost += max(0, -difference)
        check.counted_twice += max(0, difference)


# --- the competition: ICPC by brute force -------------------------------------------------------


def icpc_rows(
    attempts: Iterable[tuple], start: dt.datetime, freeze: dt.datetime | None, end: dt.datetime
) -> dict[str, dict]:
    """{handle: {"solved", "penalty", "rank", "problems": {slug: cell}}}, straight from the
    ICPC rules: attempts up to the first accepted one count; a solved problem costs its minute
    plus 20 per rejection before it; more solved, then less penalty, then an earlier last
    solve rank first, equals sharing a rank. With `freeze`, attempts from then on only show as
    pending on cells they could still change."""
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
    rows = {}
    for handle, row in cells.items():
        solved = [c for c in row.values() if c["solved_minute"] is not None]
        rows[handle] = {
            "key": (
                -len(solved),
                sum(
                    c["solved_minute"] + PENALTY_PER_REJECTION * (c["attempts"] - 1) for c in solved
                ),
                max((c["solved_minute"] for c in solved), default=0),
            ),
            "problems": row,
        }
    keys = sorted(row["key"] for row in rows.values())
    for row in rows.values():
        row["rank"] = 1 + sum(1 for key in keys if key < row["key"])
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
    return rows


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


# --- alerts -------------------------------------------------------------------------------------


def alert_emails(run_dir: Path) -> tuple[int, int]:
    """(alert emails sent, emails sent more than once), from the mail the site wrote."""
    messages = Counter()
    for path in sorted((run_dir / "mail").glob("*.log")):
        for message in path.read_text(errors="replace").split("-" * 79):
            lines = [
                line
                for line in message.strip().splitlines()
                if not line.startswith(("Date:", "Message-ID:"))
            ]
            if lines:
                messages["\n".join(lines)] += 1
    return sum(messages.values()), sum(n - 1 for n in messages.values() if n > 1)


# --- the report ---------------------------------------------------------------------------------


def percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def outage_windows(requests_log: list[dict], faults: list[dict]) -> list[dict]:
    """Each fault, when it began, and when the site answered normally again: the first moment
    after it ended from which no request failed for NORMAL_AFTER_SECONDS. A solve refused as
    `solves_busy` is the site shedding load as designed, not a failure: it comes at any time."""
    failures = sorted(r["t"] for r in requests_log if _failed(r))
    windows = []
    begun = {}
    for fault in faults:
        if fault["phase"] == "begin":
            begun[fault["fault"]] = fault["t"]
        elif fault["phase"] == "end" and fault["fault"] in begun:
            start, ended = begun.pop(fault["fault"]), fault["t"]
            normal = ended
            for moment in failures:
                if moment < start:
                    continue
                if moment - normal > NORMAL_AFTER_SECONDS:
                    break
                normal = max(normal, moment)
            windows.append(
                {"fault": fault["fault"], "start": start, "ended": ended, "normal": normal}
            )
    return windows


def _failed(record: dict) -> bool:
    status = record["status"]
    return status == 0 or (status >= 500 and record.get("code") != BUSY)


def _in_outage(moment: float, windows: list[dict]) -> bool:
    return any(w["start"] <= moment <= w["normal"] + 1 for w in windows)


def endpoint_table(requests_log: list[dict], windows: list[dict]) -> Iterator[str]:
    by_name = defaultdict(list)
    for record in requests_log:
        name = record["name"]
        if name.endswith("live"):
            name += (
                " (304)" if record["status"] == 304 else " (200)" if record["status"] == 200 else ""
            )
        by_name[name].append(record)
    yield (
        "| endpoint | requests | p50 ms | p95 ms | p99 ms | p99 outside outages | 503 "
        "(with Retry-After; of them busy) | 429 (with Retry-After) | dropped | other errors |"
    )
    yield "|---|---|---|---|---|---|---|---|---|---|"
    for name in sorted(by_name):
        records = by_name[name]
        ok = [r["ms"] for r in records if r["status"] and r["status"] < 500]
        calm = [
            r["ms"]
            for r in records
            if r["status"] and r["status"] < 500 and not _in_outage(r["t"], windows)
        ]
        s503 = [r for r in records if r["status"] == 503]
        s429 = [r for r in records if r["status"] == 429]
        other = [r for r in records if r["status"] >= 500 and r["status"] != 503]
        yield (
            f"| {name} | {len(records)} | {percentile(ok, 0.5):.0f} | {percentile(ok, 0.95):.0f}"
            f" | {percentile(ok, 0.99):.0f} | {percentile(calm, 0.99):.0f} | {len(s503)} "
            f"({sum(1 for r in s503 if r['retry_after'])}"
            f"{_busy_share(s503)}) | {len(s429)} "
            f"({sum(1 for r in s429 if r['retry_after'])}) | "
            f"{sum(1 for r in records if r['status'] == 0)} | {len(other)} |"
        )


def _busy_share(refused: list[dict]) -> str:
    busy = sum(1 for r in refused if r.get("code") == BUSY)
    return f"; {busy} busy" if busy else ""


def throughput(run_dir: Path) -> tuple[float, float]:
    """(accepted solves acknowledged per second over the load, the best 10 s of it)."""
    times = sorted(
        record["t"]
        for record in read_jsonl(run_dir / "acks.jsonl")
        if record["event"] == "answered"
        and (record["path"].endswith("/solves") or record["body"].get("verdict") == "accepted")
    )
    if len(times) < 2:
        return 0.0, 0.0
    per_second = Counter(int(t) for t in times)
    seconds = range(int(times[0]), int(times[-1]) + 1)
    windows = [sum(per_second[s + i] for i in range(10)) / 10 for s in seconds]
    return len(times) / max(1.0, times[-1] - times[0]), max(windows, default=0.0)


@dataclass
class Verdict:
    acknowledged: int
    lost: int
    counted_twice: int
    errors_500: int
    boards_equal: bool

    @property
    def passed(self) -> bool:
        return not (self.lost or self.counted_twice or self.errors_500) and self.boards_equal

    def line(self) -> str:
        return (
            f"contest day: {self.acknowledged} solves acknowledged, {self.lost} lost, "
            f"{self.counted_twice} counted twice, {self.errors_500} responses 500, "
            f"boards equal: {'yes' if self.boards_equal else 'no'}"
        )


def report(world: plan.World, run_dir: Path, *, frozen_view: list[str]) -> Verdict:
    """Print the report and return the verdict (the driver prints its line last)."""
    session = browser.behind_proxy(requests.Session(), "192.0.2.2")
    truth = truth_from_log(world, run_dir)
    requests_log = read_jsonl(run_dir / "requests.jsonl")
    faults = read_jsonl(run_dir / "faults.jsonl")
    windows = outage_windows(requests_log, faults)
    boards = check_boards(truth, world, session)
    final_view = check_standings(truth, world, session, final=True)
    emails, emailed_twice = alert_emails(run_dir)
    sustained, peak = throughput(run_dir)
    errors_500 = sum(1 for r in requests_log if r["status"] >= 500 and r["status"] != 503)

    print("\n## Requests (the load generator's log)\n")
    for line in endpoint_table(requests_log, windows):
        print(line)
    print(
        f"\nJudges: {sustained:.1f} accepted solves/s sustained, {peak:.1f}/s over the best"
        f" 10 s; {truth.refused} reports refused, {truth.unanswered} never answered."
    )
    print("\n## Faults\n")
    start = world.time("run_start").timestamp()
    for w in windows:
        print(
            f"- {w['fault']} at +{w['start'] - start:.0f} s: back at +{w['ended'] - start:.0f}"
            f" s, answering normally {w['normal'] - w['ended']:.1f} s after that"
        )
    for fault in faults:
        if fault["phase"] == "skipped":
            print(f"- {fault['fault']}: skipped ({fault.get('reason')})")
    print("\n## Checks\n")
    print(
        f"- boards: {boards.checked} board days and groups compared with the brute force, "
        f"{len(boards.differences)} differ"
    )
    for difference in (boards.differences + frozen_view + final_view)[:20]:
        print(f"  - {difference}")
    print(
        f"- standings: frozen view {'equal' if not frozen_view else 'DIFFERENT'}, "
        f"final view {'equal' if not final_view else 'DIFFERENT'}"
    )
    print(f"- alerts: {emails} emails sent, {emailed_twice} sent twice")
    if not requests_log:  # no log, no figures: "0 responses 500" would be a guess
        print("- requests: the load generator logged none")
    equal = bool(requests_log) and not (
        boards.differences or frozen_view or final_view or emailed_twice
    )
    return Verdict(
        acknowledged=truth.acknowledged,
        lost=boards.lost,
        counted_twice=boards.counted_twice + truth.counted_twice,
        errors_500=errors_500,
        boards_equal=equal,
    )

"""The contest day's verdict, from the load generator's own log (a Jepsen-style checker).

What the generator seeded (`history.jsonl`) and what the site acknowledged to it (`acks.jsonl`)
are the truth. From them alone this package recomputes, by brute force and without the engine's
code, every board of every day of the run (everybody, each country, each organization) and the
competition's ICPC standings (the public frozen view and the final one), then compares them
with what the site serves through its public API. It also reads `requests.jsonl` for the
report: latency per endpoint, errors, 503s and their Retry-After, the judges' throughput, and how
long the site took to answer normally again after each fault (`faults.jsonl`).

A (programmer, problem) counts once, on the day of the report the site said counted it
(`counted: true`); a form answer whose page was lost counts on the day it was sent. A pair
acknowledged by two reports that both said `counted: true` is counted twice; a programmer whose
all-time score is below the brute force lost solves, above it counted some twice.

Its parts: `truth` (the log read), `boards` and `standings` (each recomputed and compared with
the site's), `request_log` (the figures of the requests); this module prints the report and
gives the verdict.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import requests

from .. import browser, plan
from .boards import BoardCheck, check_boards
from .request_log import endpoint_table, outage_windows, throughput
from .standings import check_standings
from .truth import Truth, read_jsonl, truth_from_log


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
    errors_500 = sum(1 for r in requests_log if r["status"] >= 500 and r["status"] != 503)

    _requests_print(requests_log, windows, truth, run_dir)
    _faults_print(world, windows, faults)
    _checks_print(boards, frozen_view, final_view, emails=(emails, emailed_twice))
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


def _requests_print(
    requests_log: list[dict], windows: list[dict], truth: Truth, run_dir: Path
) -> None:
    """The endpoints' table, and the judges' throughput and reports left without an answer."""
    sustained, peak = throughput(run_dir)
    print("\n## Requests (the load generator's log)\n")
    for line in endpoint_table(requests_log, windows):
        print(line)
    print(
        f"\nJudges: {sustained:.1f} accepted solves/s sustained, {peak:.1f}/s over the best"
        f" 10 s; {truth.refused} reports refused, {truth.unanswered} never answered."
    )


def _faults_print(world: plan.World, windows: list[dict], faults: list[dict]) -> None:
    """Each fault, when the site was back, and how long it took to answer normally again."""
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


def _checks_print(
    boards: BoardCheck, frozen_view: list[str], final_view: list[str], *, emails: tuple[int, int]
) -> None:
    """The boards and both views of the standings beside the brute force (the first 20
    differences), and the alert emails sent, and sent twice."""
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
    print(f"- alerts: {emails[0]} emails sent, {emails[1]} sent twice")

"""The truth: what the load generator's own log says happened, and nothing else.

What the generator seeded (`history.jsonl`) and what the site acknowledged to it (`acks.jsonl`).
A (programmer, problem) counts once, on the day of the report the site said counted it
(`counted: true`); a form answer whose page was lost counts on the day it was sent. A pair
acknowledged by two reports that both said `counted: true` is counted twice.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .. import plan

EPOCH = dt.date(1970, 1, 1)


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

"""Attempts: every one, from the answer form, a competition page or a judge, is recorded by
`submission_record`, the only writer of `submissions` (a test keeps it so), which checks the
refusals before anything is written and counts a first accepted attempt as a solve (`solves`).
`answer_submit` judges an answer sent from a page, with guessing limited.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from django.utils import timezone

from .. import limits, mongo, rules
from ..models import Problem, Programmer
from .solves import score_record, solve_check_time, solve_record


class SubmissionRefused(ValueError):
    """An attempt the site does not take (a banned programmer; competitions add their own)."""


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    counted: bool


def submission_record(
    *,
    programmer: Programmer,
    problem: Problem,
    accepted: bool,
    submitted_at: dt.datetime | None = None,
    answer: str | None = None,
    competitions: Iterable[str] = (),
    key: str | None = None,
    source: str = rules.SITE,
) -> Verdict:
    """Record one attempt (from the answer form, a competition page or a judge) and count a
    first accepted one as a solve on every board.

    `competitions`: the slugs of the competitions whose standings the attempt counts in.
    `key`: a judge's idempotency key, used as the attempt's id, so a retry after a fault records
    nothing twice and is told whether its solve counted. `source`: `rules.SITE` or `rules.JUDGE`.

    Every attempt passes here, so the refusals are checked here, before anything is written:
    who may submit (`rules.submission_refusal`: SubmissionRefused) and a time the boards cannot
    take (SolveRejected). A hidden programmer's attempts are recorded and kept off the boards by
    `solve_apply`. A competition's own window is checked by `competitions` before it calls this.
    """
    refusal = rules.submission_refusal(programmer=programmer, source=source)
    if refusal:
        raise SubmissionRefused(refusal)
    submitted_at = submitted_at or timezone.now()
    solve_check_time(submitted_at)
    submission = _submission_document(
        programmer, problem, accepted, submitted_at, answer, competitions, source
    )
    submission_id = _submission_insert(submission, key)
    counted = accepted and solve_record(
        programmer=programmer, problem=problem, solved_at=submitted_at, request=key
    )
    if counted:
        mongo.submissions().update_one({"_id": submission_id}, {"$set": {"counted": True}})
    return Verdict(accepted=accepted, counted=counted)


def _submission_document(
    programmer: Programmer,
    problem: Problem,
    accepted: bool,
    submitted_at: dt.datetime,
    answer: str | None,
    competitions: Iterable[str],
    source: str,
) -> dict:
    """An attempt as `submissions` keeps it, not counted yet (the answer and a source other
    than the site only when there is one)."""
    submission = {
        "programmer_id": programmer.pk,
        "handle": programmer.handle,
        "problem": problem.slug,
        "verdict": "accepted" if accepted else "rejected",
        "submitted_at": submitted_at,
        "counted": False,
        "competitions": list(competitions),
    }
    if answer is not None:
        submission["answer"] = answer
    if source != rules.SITE:
        submission["source"] = source
    return submission


def answer_submit(
    *,
    programmer: Programmer,
    problem: Problem,
    answer: str,
    competitions: Iterable[str] = (),
    wrong_per_minute: int | None = None,
    score: int | None = None,
) -> Verdict:
    """Judge an answer sent from a page (the answer form, a competition's problem) and record it.

    Guessing is limited: past `wrong_per_minute` wrong answers to this problem in a minute (the
    site's ANSWER_WRONG_PER_MINUTE unless a competition sets its own) it raises
    `limits.Limited` and records nothing, right answer or not. Each answer takes its place in
    the minute before it is judged (one atomic increment), so answers sent all at once cannot
    pass the limit together; a right answer, or one that is not recorded, gives its place back:
    only wrong answers count. A right answer with a `score` (a scored problem's form) is also
    a scored report for the best-score boards (`score_record`)."""
    taken = limits.limit_take(
        limit=limits.wrong_answers(wrong_per_minute), key=f"{programmer.pk}:{problem.pk}"
    )
    try:
        verdict = submission_record(
            programmer=programmer,
            problem=problem,
            accepted=problem.accepts(answer),
            answer=answer,
            competitions=competitions,
        )
    except BaseException:
        limits.limit_give_back(taken)
        raise
    if verdict.accepted:
        limits.limit_give_back(taken)
        if score is not None and problem.scored:
            score_record(
                programmer=programmer, problem=problem, solved_at=timezone.now(), score=score
            )
    return verdict


def _submission_insert(submission: dict, key: str | None):
    """Insert the attempt and return its id; with a `key`, only the first time that key comes.
    The upsert's filter names the programmer, the collection's shard key on a sharded cluster
    (which must find an upsert's shard from its filter); a key comes with one body, so with one
    programmer (`idempotency`)."""
    if key is None:
        return mongo.submissions().insert_one(submission).inserted_id
    first_time = {"_id": key, "programmer_id": submission["programmer_id"]}
    mongo.submissions().update_one(first_time, {"$setOnInsert": submission}, upsert=True)
    return key

"""Writes for competitions: creating one, registering, attempts from the page and from judges,
ending early, and archiving the final standings."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from solutions import live, rules
from solutions import services as solution_services
from solutions.models import Problem, Programmer

from . import selectors
from .models import Competition, CompetitionProblem, Registration
from .signals import competition_archived

# The site's refusals and the competition's own (not running, not registered) are one kind.
SubmissionRefused = solution_services.SubmissionRefused


def letter_for(position: int) -> str:
    """A, B, ..., Z, then AA, AB, ... for the problem at 0-based `position`."""
    letters = ""
    position += 1
    while position:
        position, remainder = divmod(position - 1, 26)
        letters = chr(ord("A") + remainder) + letters
    return letters


def competition_create(
    *,
    slug: str,
    title: str,
    start: dt.datetime,
    end: dt.datetime,
    problems: Sequence[Problem],
    freeze_at: dt.datetime | None = None,
    registration_required: bool = False,
) -> Competition:
    """A new competition with its problems lettered A, B, C... in the order given.

    Raises ValidationError for a taken slug, bad times or a repeated problem.
    """
    if len({problem.pk for problem in problems}) != len(problems):
        raise ValidationError({"problems": "A problem can appear only once."})
    competition = Competition(
        slug=slug,
        title=title,
        start=start,
        end=end,
        freeze_at=freeze_at,
        registration_required=registration_required,
    )
    competition.full_clean()
    with transaction.atomic():
        competition.save()
        CompetitionProblem.objects.bulk_create(
            CompetitionProblem(
                competition=competition, problem=problem, letter=letter_for(i), position=i
            )
            for i, problem in enumerate(problems)
        )
    return competition


def competition_end_now(*, competition: Competition) -> bool:
    """End a running competition at once (a freeze time after now moves to now).

    Returns False when it is not running. Its final standings are archived by the periodic
    task, within a minute (a view never writes).
    """
    now = timezone.now()
    if not competition.is_running(now):
        return False
    competition.end = now
    if competition.freeze_at and competition.freeze_at > now:
        competition.freeze_at = now
    competition.save(update_fields=["end", "freeze_at"])
    return True


def competition_register(*, competition: Competition, programmer: Programmer) -> Registration:
    """Register a programmer for a competition (again is fine). Refused once it has ended."""
    if competition.has_ended(timezone.now()):
        raise SubmissionRefused("This competition has ended.")
    if programmer.banned:
        raise SubmissionRefused("Banned programmers cannot take part.")
    try:
        with transaction.atomic():
            registration, _ = Registration.objects.get_or_create(
                competition=competition, programmer=programmer
            )
    except IntegrityError:  # a double click racing itself
        registration = Registration.objects.get(competition=competition, programmer=programmer)
    standings_touch(slugs=[competition.slug])  # they are on the standings from now on
    return registration


def competition_submit(
    *, competition: Competition, programmer: Programmer, problem: Problem, answer: str
) -> solution_services.Verdict:
    """Judge an answer sent from the competition page: it counts in the standings, and a first
    right answer counts as a solve on every board too."""
    refusal = selectors.competition_submit_refusal(
        competition=competition, programmer=programmer, now=timezone.now()
    )
    if refusal:
        raise SubmissionRefused(refusal)
    if not competition.links.filter(problem=problem).exists():
        raise SubmissionRefused("That problem is not part of this competition.")
    verdict = solution_services.answer_submit(
        programmer=programmer,
        problem=problem,
        answer=answer,
        competitions=[competition.slug],
        wrong_per_minute=competition.wrong_answers_per_minute,
    )
    standings_touch(slugs=[competition.slug])
    return verdict


def competitions_taking(
    *, problem: Problem, programmer: Programmer, moment: dt.datetime
) -> QuerySet[Competition]:
    """The competitions an attempt on `problem` at `moment` counts in: running then, holding the
    problem, not archived yet, and open to this programmer (registered, when that is required)."""
    return (
        Competition.objects.filter(
            links__problem=problem,
            start__lte=moment,
            end__gt=moment,
            final_standings__isnull=True,
        )
        .filter(Q(registration_required=False) | Q(registrations__programmer=programmer))
        .distinct()
        .order_by("slug")
    )


@dataclass(frozen=True)
class JudgeResult:
    counted: bool
    competitions: list[str]


def judge_submission_report(
    *, key: str, handle: str, problem_slug: str, accepted: bool, submitted_at: dt.datetime
) -> JudgeResult:
    """Record a verdict a judge reports: the attempt, in every competition it counts in, and an
    accepted one as a solve everywhere. Unknown handles and problems are registered on first use,
    as for solves. Raises SolveRejected (before any write) for a time the boards cannot take.

    `key` names the report (the judge's id): a retry after a failure midway records nothing twice.
    """
    solution_services.solve_check_time(submitted_at)
    programmer = solution_services.programmer_get_or_register(handle=handle)
    problem = solution_services.problem_get_or_register(slug=problem_slug)
    slugs = list(
        competitions_taking(
            problem=problem, programmer=programmer, moment=submitted_at
        ).values_list("slug", flat=True)
    )
    verdict = solution_services.submission_record(
        programmer=programmer,
        problem=problem,
        accepted=accepted,
        submitted_at=submitted_at,
        competitions=slugs,
        key=f"judge:{key}",
        source=rules.JUDGE,
    )
    standings_touch(slugs=slugs)  # a retry touches again: harmless
    return JudgeResult(counted=verdict.counted, competitions=slugs)


def standings_touch(*, slugs: Sequence[str]) -> None:
    """Record that these competitions' standings changed, so the cached public standings are
    rendered again (see `selectors.competition_version`)."""
    live.boards_touch([selectors.standings_version_key(slug) for slug in slugs])


def standings_touch_running(*, created: bool = False, update_fields=None, **_signal) -> None:
    """A programmer changed (hidden, banned, renamed): the running competitions' public
    standings are rendered again (connected to Programmer's post_save in `apps.py`)."""
    if created or (
        update_fields is not None and not {"hidden", "banned", "handle"} & set(update_fields)
    ):
        return
    now = timezone.now()
    running = Competition.objects.filter(start__lte=now, end__gt=now)
    if slugs := list(running.values_list("slug", flat=True)):
        standings_touch(slugs=slugs)


def competition_archive(*, competition: Competition) -> bool:
    """Keep the final standings of an ended competition as JSON: handles, problem titles and
    results as they were, whatever is edited later. Returns False when it is not over or is
    archived already."""
    now = timezone.now()
    if competition.is_archived or not competition.has_ended(now):
        return False
    final = selectors.competition_final_snapshot(competition=competition)
    archived = Competition.objects.filter(pk=competition.pk, final_standings__isnull=True).update(
        final_standings=final, final_archived_at=now
    )
    if archived:
        competition.final_standings, competition.final_archived_at = final, now
        competition_archived.send(sender=Competition, competition=competition)
    else:  # somebody archived it first: theirs stands
        competition.refresh_from_db(fields=["final_standings", "final_archived_at"])
    return bool(archived)


def competitions_archive_finished() -> int:
    """Archive every competition that has ended and is not archived yet, then release the solves
    held by the freezes that are over (`solutions.holds`), whether their competition was
    archived here, by a view or ended early. Returns how many were archived."""
    ended = Competition.objects.filter(end__lte=timezone.now(), final_standings__isnull=True)
    archived = sum(competition_archive(competition=competition) for competition in ended)
    solution_services.solves_release()
    return archived

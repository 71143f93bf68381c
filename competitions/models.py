"""What staff edit in the admin for competitions: the competition, its problems, registrations.

Attempts and verdicts live in MongoDB (`submissions`, tagged with the competition slugs); the
standings are computed from them (see `standings`) and archived here as JSON once it ends.
"""

from __future__ import annotations

import datetime as dt

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.urls import reverse

from solutions.models import Problem, Programmer

UPCOMING = "upcoming"
RUNNING = "running"
ENDED = "ended"


class Competition(models.Model):
    """An ICPC-style contest: a set of problems, a time window and an optional freeze."""

    title = models.CharField(max_length=200)
    slug = models.SlugField(max_length=64, unique=True)
    start = models.DateTimeField()
    end = models.DateTimeField()
    freeze_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Public standings stop changing from this time until the end.",
    )
    wrong_answers_per_minute = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Wrong answers one programmer may send to one problem a minute from the "
        "competition's page (empty: the site's ANSWER_WRONG_PER_MINUTE).",
    )
    registration_required = models.BooleanField(
        default=False, help_text="Only registered programmers may submit."
    )
    problems = models.ManyToManyField(Problem, through="CompetitionProblem", related_name="+")
    # The standings as they were at the end, kept as shown whatever is edited later.
    final_standings = models.JSONField(null=True, blank=True, editable=False)
    final_archived_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-start", "slug"]
        constraints = [
            models.CheckConstraint(
                condition=Q(end__gt=F("start")),
                name="competition_ends_after_start",
                violation_error_message="The end must be after the start.",
            ),
            models.CheckConstraint(
                condition=Q(freeze_at__isnull=True)
                | Q(freeze_at__gte=F("start"), freeze_at__lte=F("end")),
                name="competition_freeze_inside",
                violation_error_message="The freeze time must be between the start and the end.",
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("competition", args=[self.slug])

    @property
    def length(self) -> dt.timedelta:
        """How long it runs, from the start to the end."""
        return self.end - self.start

    def clean(self) -> None:
        errors = {}
        if self.start and self.end and self.end <= self.start:
            errors["end"] = "The end must be after the start."
        elif self.freeze_at and self.start and self.end:
            if not self.start <= self.freeze_at <= self.end:
                errors["freeze_at"] = "The freeze time must be between the start and the end."
        if errors:
            raise ValidationError(errors)

    def status(self, now: dt.datetime) -> str:
        """Upcoming, running or ended at `now`."""
        if now < self.start:
            return UPCOMING
        return RUNNING if now < self.end else ENDED

    def is_running(self, now: dt.datetime) -> bool:
        return self.status(now) == RUNNING

    def has_ended(self, now: dt.datetime) -> bool:
        return self.status(now) == ENDED

    def is_frozen(self, now: dt.datetime) -> bool:
        """Whether the public standings are frozen: after the freeze time, until the end."""
        return self.freeze_at is not None and self.freeze_at <= now < self.end

    @property
    def is_archived(self) -> bool:
        return self.final_standings is not None

    def counts(self, moment: dt.datetime) -> bool:
        """Whether an attempt made at `moment` belongs to this competition's standings."""
        return self.start <= moment < self.end and not self.is_archived


class CompetitionProblem(models.Model):
    """A problem of a competition, with its letter (A, B, ...) and column position."""

    competition = models.ForeignKey(Competition, on_delete=models.CASCADE, related_name="links")
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="+")
    letter = models.CharField(max_length=3)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "letter"]
        constraints = [
            models.UniqueConstraint(
                fields=["competition", "problem"], name="competition_problem_once"
            ),
            models.UniqueConstraint(
                fields=["competition", "letter"], name="competition_letter_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.letter}. {self.problem}"


class Registration(models.Model):
    """A programmer taking part in a competition that requires registration."""

    competition = models.ForeignKey(
        Competition, on_delete=models.CASCADE, related_name="registrations"
    )
    programmer = models.ForeignKey(Programmer, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["competition", "programmer"], name="registration_once"),
        ]

    def __str__(self) -> str:
        return f"{self.programmer} in {self.competition}"

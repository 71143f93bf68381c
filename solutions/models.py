"""What staff edit in the admin: programmers, problems and leaderboard definitions (SQL)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Func
from django.db.models.functions import Lower
from django_countries.fields import CountryField

from . import leaderboard
from .rules import HANDLE_SKELETON_MAX_LENGTH, Scope, handle_skeleton, handle_validator

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

MAX_PROBLEM_POINTS = 10_000
# A reported score (best-score boards): a board's total of them stays inside a sort key.
MAX_SCORE = 1_000_000_000


class Bytewise(Func):
    """An expression compared and ordered byte by byte on every database, so that a range of it
    is exactly a prefix: ``key >= "bo" AND key < "bp"`` holds every key starting with "bo" and
    nothing else. SQLite compares text that way already; PostgreSQL compares in the database's
    collation unless told otherwise, and a linguistic one (en-US) skips punctuation, so "b-ob"
    would land among the handles starting with "bo". An index on the same expression serves the
    range on both (see `Programmer.Meta`)."""

    arity = 1
    template = "%(expressions)s"

    def as_postgresql(self, compiler, connection, **extra_context):
        template = '%(expressions)s COLLATE "C"'
        return self.as_sql(compiler, connection, template=template, **extra_context)


def handle_key() -> Bytewise:
    """A handle as its case-insensitive, byte-ordered key: what handles are unique by, and the
    order and prefix ranges of the search (`selectors.programmers_starting_with`)."""
    return Bytewise(Lower("handle"))


class ProgrammerQuerySet(models.QuerySet):
    def handle_is(self, handle: str) -> ProgrammerQuerySet:
        """The programmer whose handle is `handle` in any case (at most one): an equality on the
        handle key, which the unique index on it serves at any number of programmers
        (`handle__iexact` is a LIKE on SQLite and UPPER() on PostgreSQL: a scan of the table)."""
        return self.alias(key=handle_key()).filter(key=handle.lower())

    def handles_in(self, handles: Iterable[str]) -> ProgrammerQuerySet:
        """The programmers whose handle is one of `handles` in any case: the same index, one
        lookup a handle (an import registers its lines' handles 500 at a time)."""
        return self.alias(key=handle_key()).filter(key__in=[h.lower() for h in handles])

    def looking_like(self, handle: str) -> ProgrammerQuerySet:
        """The programmers whose handle looks like `handle` without being it (``dem0`` for
        ``demo``; see `rules.handle_skeleton`): an equality on the indexed skeleton."""
        others = self.alias(key=handle_key()).exclude(key=handle.lower())
        return others.filter(handle_skeleton=handle_skeleton(handle))


class HandleSkeletonField(models.CharField):
    """The skeleton of the row's handle (`rules.handle_skeleton`), worked out from the handle
    whenever the row is written (created, saved or bulk-created), so the two never disagree."""

    def pre_save(self, model_instance: models.Model, add: bool) -> str:
        skeleton = handle_skeleton(model_instance.handle)
        setattr(model_instance, self.attname, skeleton)
        return skeleton


class Programmer(models.Model):
    """A person on the boards. Judges may register one before it has a user account."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="programmer",
    )
    handle = models.CharField(max_length=32, validators=[handle_validator])
    # What the handle reads as: a new handle that looks like another's is refused (one indexed
    # equality). Not unique: judges' imports may hold look-alikes from before the rule.
    handle_skeleton = HandleSkeletonField(
        max_length=HANDLE_SKELETON_MAX_LENGTH, editable=False, db_index=True, default=""
    )
    country = CountryField(blank=True, help_text="The country shown with a flag on the boards.")
    organization = models.CharField(max_length=100, blank=True)
    hidden = models.BooleanField(default=False, help_text="Left out of public boards.")
    banned = models.BooleanField(default=False, help_text="Left out of boards; cannot submit.")
    # The address asked for on the account page, until its link is followed: only then does it
    # become the user's email (the one alerts and password resets go to).
    email_pending = models.EmailField(
        blank=True, help_text="An address waiting for its confirmation link to be followed."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Set when the account was deleted: the row stays, anonymous, for the solves log (see
    # `accounts.services.account_delete`); its profile is gone for everybody.
    deleted_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = ProgrammerQuerySet.as_manager()

    class Meta:
        ordering = ["handle"]
        constraints = [
            # Unique without regard to case; the same index serves a search by the start of a
            # handle (a range of `handle_key`) at any number of programmers.
            models.UniqueConstraint(handle_key(), name="programmer_handle_ci_unique"),
        ]

    def __str__(self) -> str:
        return self.handle

    @property
    def on_boards(self) -> bool:
        """Whether this programmer's solves show on public boards."""
        return not (self.hidden or self.banned)

    def profile_shown_to(self, viewer: User | AnonymousUser) -> bool:
        """Whether `viewer` may see this programmer's profile and activity: everybody when they
        are on the boards; staff also when they are hidden (to judge whether to restore them);
        nobody when they are banned or their account is deleted."""
        if self.banned or self.deleted_at is not None:
            return False
        return not self.hidden or viewer.is_staff

    def group_scopes(self) -> list[str]:
        """The filtered views of every board this programmer belongs to."""
        groups = Scope.groups_of(country=str(self.country), organization=self.organization)
        return [str(group) for group in groups]


class Problem(models.Model):
    """A problem with one expected answer."""

    EXACT = "exact"
    NORMALIZED = "normalized"
    MATCH_CHOICES = [
        (EXACT, "Exactly as written"),
        (NORMALIZED, "Trimmed, case-insensitive"),
    ]

    slug = models.SlugField(max_length=64, unique=True)
    title = models.CharField(max_length=200)
    statement = models.TextField(blank=True)
    points = models.PositiveIntegerField(
        default=100, validators=[MinValueValidator(1), MaxValueValidator(MAX_PROBLEM_POINTS)]
    )
    answer = models.CharField(max_length=1000, blank=True)
    answer_match = models.CharField(max_length=16, choices=MATCH_CHOICES, default=NORMALIZED)
    published = models.BooleanField(default=True)
    scored = models.BooleanField(
        default=False,
        help_text="Answers carry a score (a heuristic or optimization problem): the answer form "
        "asks for it, and best-score boards count it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.title

    def accepts(self, answer: str) -> bool:
        """Whether `answer` is right, compared the way this problem says."""
        if self.answer_match == self.EXACT:
            return answer == self.answer
        return answer.strip().casefold() == self.answer.strip().casefold()


class Board(models.Model):
    """A leaderboard definition: which solves count (window), how (metric), and how ties rank."""

    WINDOW_CHOICES = [
        (leaderboard.ROLLING, "Rolling last N days"),
        (leaderboard.WEEK, "Calendar week (from Monday)"),
        (leaderboard.MONTH, "Calendar month"),
        (leaderboard.ALL_TIME, "All time"),
    ]
    SOLVED = "solved"
    POINTS = "points"
    STREAK = "streak"
    BEST = "best"
    METRIC_CHOICES = [
        (SOLVED, "Problems solved"),
        (POINTS, "Points"),
        (STREAK, "Streak of solve days"),
        (BEST, "Sum of best scores"),
    ]
    SHARED = "shared"
    UNIQUE = "unique"
    TIES_CHOICES = [(SHARED, "Shared ranks (1, 2, 2, 4)"), (UNIQUE, "Unique ranks (1, 2, 3, 4)")]

    slug = models.SlugField(max_length=50, unique=True)
    title = models.CharField(max_length=100)
    window = models.CharField(max_length=16, choices=WINDOW_CHOICES, default=leaderboard.ROLLING)
    window_days = models.PositiveSmallIntegerField(
        default=7,
        validators=[MinValueValidator(1), MaxValueValidator(90)],
        help_text="N for rolling windows (1 to 90).",
    )
    metric = models.CharField(max_length=16, choices=METRIC_CHOICES, default=SOLVED)
    # Best-score boards: each problem counts the programmer's best reported score in the window.
    # PROTECT: the board goes first; a board never changes what it counts by itself.
    problem = models.ForeignKey(
        Problem,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="Best-score boards: count this problem alone (a leaderboard of its best scores).",
    )
    lower_is_better = models.BooleanField(
        default=False,
        help_text="Best-score boards: a lower score is better (a time, a code length); each "
        "problem then counts its score limit minus its best score.",
    )
    score_limit = models.PositiveIntegerField(
        default=1_000_000,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_SCORE)],
        help_text="Best-score boards where lower is better: a problem counts this minus its best "
        "score (0 at or above it), so more problems rank higher, then the lower total.",
    )
    ties = models.CharField(max_length=16, choices=TIES_CHOICES, default=SHARED)
    visible = models.BooleanField(default=True)
    is_default = models.BooleanField(default=False, help_text="Shown at /leaderboard/.")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "slug"]

    def __str__(self) -> str:
        return self.title

    def clean(self) -> None:
        if self.metric == self.STREAK and self.window in (leaderboard.WEEK, leaderboard.MONTH):
            message = "A streak board ranks each day (rolling) or the longest ever (all time)."
            raise ValidationError({"window": message})
        if self.metric != self.BEST and self.problem_id is not None:
            raise ValidationError({"problem": "Only a best-score board counts one problem alone."})
        if self.metric == self.BEST and self.problem_id is not None and not self.problem.scored:
            raise ValidationError({"problem": "That problem is not scored: it has no scores."})

    @property
    def spec(self) -> leaderboard.Window:
        """What the engine counts: the window, or for a streak board its own (`window_days`
        does not apply: a day's streak is known on that day and the next)."""
        if self.metric == self.STREAK:
            return leaderboard.streak_window(all_time=self.window == leaderboard.ALL_TIME)
        return leaderboard.Window(self.window, self.window_days, best=self.is_best)

    @property
    def is_best(self) -> bool:
        """A best-score board: it counts scored reports (the `scores` log), not solves."""
        return self.metric == self.BEST

    def counts_problem(self, problem_slug: str) -> bool:
        """Whether a scored report of this problem counts on this best-score board."""
        return self.is_best and (self.problem_id is None or self.problem.slug == problem_slug)

    def value_of_score(self, score: int) -> int:
        """What a reported score counts as on this best-score board, bigger being better: the
        score, or when lower is better the score limit minus it (0 at or above the limit)."""
        return max(self.score_limit - score, 0) if self.lower_is_better else score

    @property
    def is_streak(self) -> bool:
        return self.metric == self.STREAK

    @property
    def score_label(self) -> str:
        """What its scores count, as a column's head: days for a streak board."""
        return "Days" if self.is_streak else "Score"

    @property
    def is_rolling(self) -> bool:
        """A rolling last-N-days board (a streak board's days are its own, not N days)."""
        return self.window == leaderboard.ROLLING and not self.is_streak

    def value_of(self, points: int) -> int:
        """What one solve adds to a score on this board."""
        return points if self.metric == self.POINTS else 1

    def window_label(self) -> str:
        if self.window == leaderboard.ROLLING:
            return f"last {self.window_days} days"
        return dict(self.WINDOW_CHOICES)[self.window].lower()

    def definition(self) -> str:
        """What a streak board's score means, shown under its title ("" for the others)."""
        if not self.is_streak:
            return ""
        solve_day = (
            "A solve day is a day with at least one counted solve (the first accepted solve of "
            "a problem), in the leaderboard's time zone."
        )
        if self.spec.is_all_time:
            longest = "The longest streak: the largest number of consecutive solve days ever."
            return f"{longest} {solve_day}"
        return (
            "The current streak on a day: the number of consecutive solve days ending that day, "
            "or ending the day before when the day has no solve yet (a streak stays alive until "
            f"the end of the next day); 0 when neither is a solve day. {solve_day}"
        )

    def tie_rule(self) -> str:
        """The tie rule in words, shown on the board page."""
        order = "inside a tie, whoever reached the score earlier is listed first, then by handle"
        if self.ties == self.UNIQUE:
            return f"Every programmer has a rank of their own; {order}."
        return f"Equal scores share a rank (1, 2, 2, 4); {order}."


class ServiceToken(models.Model):
    """A judge's or game server's key to post solves. Only its SHA-256 hash is kept: the token
    itself is shown once, when it is made."""

    name = models.CharField(max_length=100, help_text="Who uses it, e.g. the judge's host name.")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    active = models.BooleanField(default=True, help_text="Untick to revoke the token.")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

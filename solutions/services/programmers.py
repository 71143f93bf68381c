"""Programmers: signing up, registering on first use, hiding and banning, and their entries
recomputed from the logs.

A new handle is checked here: its pattern (`rules`), taken in any case, and looking like a taken
one (`HandleLooksTaken`). A judge's unknown handle, or problem, is registered on first use.
Hiding, banning or restoring a programmer moves only that programmer: leaving the boards empties
their entries, coming back recomputes them from the `solves` and `scores` logs (idempotent, so
the repairs use it too), and solves keep being logged meanwhile, so nothing is lost either way.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from .. import holds, leaderboard, mongo, solvers
from ..clock import today
from ..models import Board, Problem, Programmer, handle_validator
from .applied import orders_moved
from .rebuilds import board_entry, board_windows, programmer_identity


class HandleLooksTaken(ValidationError):
    """A new handle that looks like another programmer's (`rules.handle_skeleton`), whose
    handle is ``params["looks_like"]``."""


def programmer_create(
    *, user: AbstractBaseUser | None, handle: str, country: str = "", organization: str = ""
) -> Programmer:
    """A new programmer. Raises ValidationError for a bad or taken handle, HandleLooksTaken
    for one that looks like a taken one."""
    handle_validator(handle)
    if Programmer.objects.handle_is(handle).exists():
        raise ValidationError("That handle is taken.", code="taken")
    handle_check_unlike_others(handle)
    try:
        with transaction.atomic():
            return Programmer.objects.create(
                user=user, handle=handle, country=country.upper(), organization=organization
            )
    except IntegrityError as error:  # two sign-ups racing for one handle
        raise ValidationError("That handle is taken.", code="taken") from error


def programmer_get_or_register(*, handle: str) -> Programmer:
    """The programmer with this handle (any case), registered on first use by a judge. A new
    handle that looks like a taken one is refused (HandleLooksTaken): the judge meant that
    programmer, or the handle would pass for theirs on every board."""
    handle_validator(handle)
    existing = Programmer.objects.handle_is(handle).first()
    if existing:
        return existing
    handle_check_unlike_others(handle)
    try:
        with transaction.atomic():
            return Programmer.objects.create(handle=handle)
    except IntegrityError:
        return Programmer.objects.handle_is(handle).get()


def handle_check_unlike_others(handle: str) -> None:
    """Raise HandleLooksTaken when a new handle looks like another programmer's (one indexed
    equality). Two look-alikes signing up in the same instant may both pass: the rule keeps
    impostors off, it is not what the boards' correctness rests on."""
    looks_like = Programmer.objects.looking_like(handle).values_list("handle", flat=True).first()
    if looks_like is not None:
        raise HandleLooksTaken(
            "That handle looks like %(looks_like)s, which is taken: pick one that reads "
            "differently.",
            code="looks_taken",
            params={"looks_like": looks_like},
        )


def problem_get_or_register(*, slug: str) -> Problem:
    """The problem with this slug, registered (unpublished, no answer) on first use by a judge."""
    problem, _ = Problem.objects.get_or_create(
        slug=slug, defaults={"title": slug, "published": False}
    )
    return problem


def programmer_set_visibility(
    *, programmer: Programmer, hidden: bool | None = None, banned: bool | None = None
) -> Programmer:
    """Hide, ban or restore a programmer (None leaves a flag as it is).

    Leaving the boards empties their entries and takes them out of the orders, so everybody
    below closes up at once; coming back recomputes their entries from the `solves` log. Only this
    programmer moves. Solves keep being logged meanwhile (`solve_apply` skips the boards), so
    nothing is lost either way.
    """
    was_on_boards = programmer.on_boards
    if hidden is not None:
        programmer.hidden = hidden
    if banned is not None:
        programmer.banned = banned
    programmer.save(update_fields=["hidden", "banned"])
    if programmer.on_boards != was_on_boards:
        programmer_refresh_boards(programmer=programmer)
    return programmer


def _solves_of(programmer: Programmer) -> list[dict]:
    """A programmer's solves the boards count (not the held ones)."""
    return list(
        mongo.solves().find(
            {"programmer_id": programmer.pk, **holds.SHOWN}, {"points": 1, "solved_at": 1}
        )
    )


def _scores_of(programmer: Programmer) -> list[dict]:
    """A programmer's scored reports (the log of the best-score boards)."""
    fields = {"problem": 1, "score": 1, "solved_at": 1}
    return list(mongo.scores().find({"programmer_id": programmer.pk, **holds.SHOWN}, fields))


def programmer_refresh_boards(*, programmer: Programmer) -> None:
    """Recompute a programmer's entries on every board from the solves log (the best-score
    boards' from the scores log) and move them in the orders: after a crash left a solve
    unapplied, after their handle or groups changed (entries keep copies of both), or when they
    leave the boards (no entries) or come back."""
    solves = _solves_of(programmer) if programmer.on_boards else []
    scores = _scores_of(programmer) if programmer.on_boards else []
    now_day = today()
    boards = list(Board.objects.select_related("problem"))
    who = programmer_identity(programmer)
    documents = {}
    for board in boards:
        document, ids = board_entry(
            board, who, solves, scores, now_day, settings.LEADERBOARD_TIME_ZONE
        )
        entry = None if document is None else leaderboard.entry_applied_with(document, ids)
        documents[board.slug] = entry
    # Its batch touches every board listed.
    boards_kept = board_windows(boards)
    leaderboard.entries_replace(programmer.pk, documents, boards=boards_kept, finish=orders_moved)
    # The problems' solver counts leave them out (or take them back) the same way.
    solvers.programmer_sync(programmer_id=programmer.pk, counted=programmer.on_boards)

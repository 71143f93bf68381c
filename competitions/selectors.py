"""Reads for competitions: the lists, who may submit, and the standings each viewer may see.

Who sees what, while it runs: staff see the live standings; everybody else sees the standings as
they were at the freeze time (live before it), and a programmer also sees their own row live.
Once it has ended, everybody sees the final standings: computed from the attempts until beat's
task archives them (within a minute; a read never writes), the archive from then on. Hidden and
banned programmers are never listed, and the ranks of the others close up.

A frozen competition stays frozen everywhere: a solve of one of its problems made from the freeze
time to the end is held off every public surface of `solutions` (the boards, profiles, the
activity API, the problems' solvers, search) until the end, then counted with its real time (see
`solutions.holds`; `competition_solve_holds` declares the windows). It is held whoever solved it
and however: registered or not, taking part or not, from the competition's page, a judge or the
problem's own page. Holding only the participants' solves would still tell the public that
somebody solved the problem (its solver count), and a participant's answer on the problem's own
page would tell who; every solve of the problem in those hours says something the frozen
standings hide. Staff still see the live standings and the held solves on profiles, and each
programmer their own results.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Collection
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, QuerySet
from django.utils import timezone

from solutions import live, recent, rules
from solutions.models import Programmer

from . import attempts as competition_attempts
from . import standings
from .models import Competition, CompetitionProblem, Registration


@dataclass(frozen=True)
class Column:
    """A problem column of the standings."""

    letter: str
    slug: str
    title: str


# Rows a page of the standings shows: on contest day a table of every participant, polled every
# few seconds by every viewer, was some 300 KB a poll (and a rendering of all of it a version).
STANDINGS_PAGE_SIZE = 100


@dataclass
class StandingsView:
    competition: Competition
    columns: list[Column]
    rows: list[standings.Row]
    frozen: bool  # other programmers' rows stop at the freeze time
    final: bool
    viewer_id: int | None = None
    frozen_at: dt.datetime | None = None
    # Only these programmers' rows are listed (a people view such as "following"); None: all.
    # Ranks and the totals below stay those of the whole standings.
    only: Collection[int] | None = None
    # Only this page of STANDINGS_PAGE_SIZE rows of those listed is shown (the pages' table);
    # None: every row (the API).
    page: int | None = None

    @property
    def listed(self) -> list[standings.Row]:
        """The rows listed, every page: everybody's, or only the people view's."""
        return [row for row in self.rows if self.only is None or row.programmer_id in self.only]

    @property
    def pages(self) -> int:
        """How many pages the rows listed fill (at least one, empty)."""
        return max(1, math.ceil(len(self.listed) / STANDINGS_PAGE_SIZE))

    @property
    def lines(self) -> list[tuple[standings.Row, list[standings.Cell | None]]]:
        """Each row of the page (all rows without one) with its cells in column order (None
        where nothing was tried), for tables."""
        rows = self.listed
        if self.page is not None:
            rows = rows[(self.page - 1) * STANDINGS_PAGE_SIZE : self.page * STANDINGS_PAGE_SIZE]
        return [(row, [row.cells.get(column.slug) for column in self.columns]) for row in rows]

    @property
    def viewer_page(self) -> int | None:
        """The page listing the viewer's own row (None: not listed, or no viewer)."""
        for index, row in enumerate(self.listed):
            if row.programmer_id == self.viewer_id:
                return index // STANDINGS_PAGE_SIZE + 1
        return None

    @property
    def totals(self) -> list[tuple[int, int]]:
        """(how many solved it, how many tried it) of each column, over every row as this viewer
        sees them: a cell the freeze holds is pending (tried), never solved, so the totals tell
        no more than the cells (the viewer's own row is live, as they see it)."""
        cells = [[row.cells.get(column.slug) for row in self.rows] for column in self.columns]
        return [
            (
                sum(1 for cell in column if cell is not None and cell.solved),
                sum(1 for cell in column if cell is not None and cell.tries),
            )
            for column in cells
        ]


def standings_version_key(slug: str) -> str:
    """The competition's counter among the live versions (no board slug has a colon)."""
    return f"competition:{slug}"


# How long a page may use a competition's version read from the cache. Unlike a board's, an
# attempt does not drop it: during a contest attempts arrive many times a second, and each new
# version renders the whole table again (a second of a web worker's time for 400 programmers),
# so the public standings change at most every few seconds, as contest scoreboards do.
CACHED_STANDINGS_VERSION_SECONDS = 5


def competition_version(*, competition: Competition, cached: bool = True) -> int:
    """How many times the competition's standings changed (every attempt recorded in it, every
    registration, hide, ban or rename, every edit of it or its problems bumps it:
    `services.standings_touch`), as read once every CACHED_STANDINGS_VERSION_SECONDS of the
    clock for every process (`cached`, `solutions.recent.slot_shared`: each version a process
    sees is one reading of every attempt), or as it is now (one `_id` read)."""

    def read() -> int:
        return live.board_version(standings_version_key(competition.slug))

    if not cached:
        return read()
    key = f"standings-version:{competition.slug}"
    return recent.slot_shared(key, CACHED_STANDINGS_VERSION_SECONDS, read)


def competitions_by_status(*, now: dt.datetime | None = None) -> dict[str, list[Competition]]:
    """Running (ending soonest first), upcoming (soonest first) and past (latest first), each
    with `registered`: how many registered (one SQL read a group)."""
    now = now or timezone.now()
    competitions = Competition.objects.annotate(registered=Count("registrations"))
    return {
        "running": list(competitions.filter(start__lte=now, end__gt=now).order_by("end", "slug")),
        "upcoming": list(competitions.filter(start__gt=now).order_by("start", "slug")),
        "past": list(competitions.filter(end__lte=now).order_by("-end", "slug")),
    }


def competition_solve_holds(
    *, problems: Collection[str], now: dt.datetime
) -> dict[str, list[tuple[dt.datetime, dt.datetime]]]:
    """{problem slug: [(freeze time, end), ...]} of the competitions with a freeze holding these
    problems that end after `now` and are not archived (see the module docstring): one SQL read.
    Registered in `solutions.extensions.solve_holds`.

    Most of the time no competition is frozen: the competitions are asked first, alone, so a
    solve then reads one small table and never the problems (a solve's request reads nothing
    else of SQL)."""
    frozen = list(
        Competition.objects.filter(
            freeze_at__isnull=False, end__gt=now, final_standings__isnull=True
        ).values_list("pk", flat=True)
    )
    if not frozen:
        return {}
    links = CompetitionProblem.objects.filter(
        problem__slug__in=list(problems), competition__in=frozen
    ).values_list("problem__slug", "competition__freeze_at", "competition__end")
    windows: dict[str, list[tuple[dt.datetime, dt.datetime]]] = {}
    for slug, freeze_at, end in links:
        windows.setdefault(slug, []).append((freeze_at, end))
    return windows


def competition_by_slug(slug: str) -> Competition | None:
    return Competition.objects.filter(slug=slug).first()


def competition_links(*, competition: Competition) -> QuerySet[CompetitionProblem]:
    return competition.links.select_related("problem")


def competition_is_registered(*, competition: Competition, programmer: Programmer | None) -> bool:
    if programmer is None:
        return False
    return Registration.objects.filter(competition=competition, programmer=programmer).exists()


def competition_submit_refusal(
    *, competition: Competition, programmer: Programmer | None, now: dt.datetime
) -> str | None:
    """Why this programmer cannot submit to the competition now, or None when they can."""
    if not competition.is_running(now):
        return "Answers are taken only while the competition runs."
    if programmer is None:
        return "Log in as a programmer to take part."
    refusal = rules.submission_refusal(programmer=programmer)
    if refusal:
        return refusal
    if competition.registration_required and not competition_is_registered(
        competition=competition, programmer=programmer
    ):
        return "Register for this competition to submit answers."
    return None


def viewer_programmer(user: AbstractBaseUser | AnonymousUser | None) -> Programmer | None:
    if user is None or not user.is_authenticated:
        return None
    return Programmer.objects.filter(user=user).first()


def _participants(
    competition: Competition, attempts: list[standings.Attempt], *, visible_only: bool
) -> dict[int, Programmer]:
    """Everybody who attempted a problem or registered (without the hidden and banned when
    `visible_only`)."""
    ids = {attempt.programmer_id for attempt in attempts}
    ids.update(competition.registrations.values_list("programmer_id", flat=True))
    programmers = Programmer.objects.filter(pk__in=ids)
    if visible_only:
        programmers = programmers.filter(hidden=False, banned=False)
    return {programmer.pk: programmer for programmer in programmers}


def competition_live_rows(
    *,
    competition: Competition,
    columns: list[Column],
    cutoff: dt.datetime | None = None,
    own_id: int | None = None,
    visible_only: bool = True,
    version: int | None = None,
) -> list[standings.Row]:
    """The standings from the recorded attempts: only those before `cutoff` (when given), except
    for the programmer `own_id`, whose attempts all count; the others after `cutoff` show as
    pending tries. `version`: the standings' version shown, whose attempts are read once
    (`attempts.at_version`); without it, as they are now."""
    if version is None:
        attempts = competition_attempts.every(competition=competition)
    else:
        attempts = competition_attempts.at_version(competition=competition, version=version)
    programmers = _participants(competition, attempts, visible_only=visible_only)
    held_back: list[standings.Attempt] = []
    if cutoff is not None:
        shown = [a for a in attempts if a.at < cutoff or a.programmer_id == own_id]
        held_back = [a for a in attempts if not (a.at < cutoff or a.programmer_id == own_id)]
        attempts = shown
    return standings.standings(
        attempts,
        start=competition.start,
        problems=[column.slug for column in columns],
        handles={pid: programmer.handle for pid, programmer in programmers.items()},
        held_back=held_back,
    )


def competition_columns(*, competition: Competition) -> list[Column]:
    return [
        Column(letter=link.letter, slug=link.problem.slug, title=link.problem.title)
        for link in competition_links(competition=competition)
    ]


def competition_final_snapshot(*, competition: Competition) -> dict:
    """What the archive keeps: the problem columns and everybody's row as they are now.

    Hidden and banned programmers are kept too (flagged), so hiding or restoring somebody later
    still shows the right final standings; ranks are stored as shown at the end.
    """
    columns = competition_columns(competition=competition)
    slugs = [column.slug for column in columns]
    rows = competition_live_rows(competition=competition, columns=columns, visible_only=False)
    off_ids = _off_boards([row.programmer_id for row in rows])
    visible = standings.rank_rows([r for r in rows if r.programmer_id not in off_ids], slugs)
    hidden = [r for r in rows if r.programmer_id in off_ids]
    return {
        "columns": [
            {"letter": column.letter, "slug": column.slug, "title": column.title}
            for column in columns
        ],
        "rows": [row.to_dict() for row in visible]
        + [{**row.to_dict(), "rank": None, "hidden": True} for row in hidden],
    }


def _off_boards(ids: list[int]) -> set[int]:
    """Which of these programmers are hidden or banned now."""
    return set(
        Programmer.objects.filter(pk__in=ids)
        .exclude(hidden=False, banned=False)
        .values_list("pk", flat=True)
    )


def _final_rows(competition: Competition, columns: list[Column]) -> list[standings.Row]:
    """The archived rows without whoever is hidden or banned now, ranks closed up."""
    archived = competition.final_standings["rows"]
    off_boards = _off_boards([row["programmer_id"] for row in archived])
    rows = [
        standings.Row.from_dict({**row, "rank": row["rank"] or 0})
        for row in archived
        if row["programmer_id"] not in off_boards
    ]
    return standings.rank_rows(rows, [column.slug for column in columns])


def competition_standings(
    *,
    competition: Competition,
    user: AbstractBaseUser | AnonymousUser | None = None,
    now: dt.datetime | None = None,
    version: int | None = None,
) -> StandingsView:
    """The standings `user` may see now (see the module docstring), at `version` if given."""
    now = now or timezone.now()
    programmer = viewer_programmer(user)
    viewer_id = programmer.pk if programmer else None
    if competition.is_archived:
        columns = [Column(**column) for column in competition.final_standings["columns"]]
        return StandingsView(
            competition=competition,
            columns=columns,
            rows=_final_rows(competition, columns),
            frozen=False,
            final=True,
            viewer_id=viewer_id,
        )
    columns = competition_columns(competition=competition)
    is_staff = bool(user is not None and user.is_authenticated and user.is_staff)
    frozen = competition.is_frozen(now) and not is_staff
    rows = competition_live_rows(
        competition=competition,
        columns=columns,
        cutoff=competition.freeze_at if frozen else None,
        own_id=viewer_id,
        version=version,
    )
    return StandingsView(
        competition=competition,
        columns=columns,
        rows=rows,
        frozen=frozen,
        final=competition.has_ended(now),  # the archive follows within a minute
        viewer_id=viewer_id,
        frozen_at=competition.freeze_at if frozen else None,
    )

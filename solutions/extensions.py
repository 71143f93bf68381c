"""Extension points: how the apps built on `solutions` add their parts to its pages.

`solutions` is the bottom of the site and never imports the apps above it. An app that wants to
show something on a board or a profile does it, in order of preference:

1. with a template tag of its own, loaded by the template (follow buttons, charts: see
   `activity/templatetags/activity_extras.py`): nothing here is needed;
2. by registering into one of the small registries below from its `AppConfig.ready()`,
   when the page's Python side needs its data:

   - **board row decorators** (`board_rows_decorator`): turn a page's rows into richer rows
     (activity adds the places moved since the previous day). They run once per board version,
     before the rendered rows are cached, so they must depend only on the board, the day, the
     scope and the rows, never on the viewer. A decorated row keeps the `Row` fields.
   - **page fingerprint parts** (`page_fingerprint_part`): whatever else a page shows that can
     change without a solve (the unread-notification bell, the follow button). Each part is
     hashed into the page's ETag, so a poll answers 304 only while all of them are unchanged.
   - **board views** (`board_view`): another list of rows to rank on a board, chosen with
     `?view=<name>` (activity's "following": the people the viewer follows).
   - **people views** (`people_view`): a set of programmers a viewer picks by name, for lists
     that are not boards (activity's "following": the people the viewer follows and the viewer;
     competitions filter their standings with it, as `?view=following` filters a board).
   - **solve holds** (`solve_holds`): the time windows during which the solves of a problem
     are held off every public surface until the window closes (competitions: from a freeze
     to the end; see `holds`).

Registering the same function twice (a `ready()` run again by a test runner) registers it once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Hashable
from dataclasses import dataclass
from typing import Any, Literal

from django.http import HttpRequest

PageKind = Literal["board", "profile", "standings"]  # standings: a competition's (subject)

RowsDecorator = Callable[..., list]
"""`fn(*, page: selectors.BoardPage, rows: list) -> list`: the rows, decorated."""

FingerprintPart = Callable[..., Hashable]
"""`fn(*, request, page: PageKind, fragment: bool, subject: Board | Programmer | ...) -> hashable`:
what this app shows on that page for that viewer, as a value that changes when it does (None
when the app adds nothing there)."""

BoardRows = Callable[..., list | None]
"""`fn(*, board, user, day) -> list[Row] | None`: the rows of a board view (None: the viewer must
log in to see it)."""

PeopleOf = Callable[..., Collection[int] | None]
"""`fn(*, user) -> programmer ids | None`: the programmers of a people view for this viewer (None:
the viewer must log in to have any)."""

SolveHolds = Callable[..., dict[str, list[tuple[dt.datetime, dt.datetime]]]]
"""`fn(*, problems: Collection[str], now: datetime) -> {problem slug: [(held from, held until),
...]}`: the windows [from, until) that close after `now` during which a solve of each of these
problems is held (problems with none left out)."""

_row_decorators: list[RowsDecorator] = []
_fingerprint_parts: list[FingerprintPart] = []
_board_views: dict[str, BoardView] = {}
_solve_holds: list[SolveHolds] = []
_people_views: dict[str, PeopleOf] = {}


@dataclass(frozen=True)
class BoardView:
    """A way of ranking a subset of a board, chosen with `?view=<name>`.

    `per_viewer`: whether the rows depend on the viewer (then a fingerprint part must cover
    whatever they depend on besides the board's version, e.g. whom the viewer follows)."""

    name: str
    rows: BoardRows
    per_viewer: bool = True


def board_rows_decorator(decorator: RowsDecorator) -> RowsDecorator:
    """Register a board row decorator (usable as a decorator)."""
    if decorator not in _row_decorators:
        _row_decorators.append(decorator)
    return decorator


def board_rows_decorate(*, page: Any, rows: list) -> list:
    """The page's rows through every registered decorator, in registration order."""
    for decorator in _row_decorators:
        rows = decorator(page=page, rows=rows)
    return rows


def page_fingerprint_part(part: FingerprintPart) -> FingerprintPart:
    """Register a page fingerprint part (usable as a decorator)."""
    if part not in _fingerprint_parts:
        _fingerprint_parts.append(part)
    return part


def page_fingerprint(
    *, request: HttpRequest, page: PageKind, fragment: bool, subject: Any
) -> tuple:
    """Every registered part for this page and viewer."""
    return tuple(
        part(request=request, page=page, fragment=fragment, subject=subject)
        for part in _fingerprint_parts
    )


def board_view(view: BoardView) -> BoardView:
    """Register a board view under its name (a second registration replaces the first)."""
    _board_views[view.name] = view
    return view


def board_view_named(name: str | None) -> BoardView | None:
    """The board view chosen by `?view=<name>` (None: the whole board)."""
    return _board_views.get(name or "")


def people_view(name: str, people: PeopleOf) -> PeopleOf:
    """Register a people view under its name (a second registration replaces the first)."""
    _people_views[name] = people
    return people


def people_view_named(name: str | None) -> PeopleOf | None:
    """The people view chosen by `?view=<name>` (None: nobody registered it)."""
    return _people_views.get(name or "")


def solve_holds(holds: SolveHolds) -> SolveHolds:
    """Register a source of solve holds (usable as a decorator)."""
    if holds not in _solve_holds:
        _solve_holds.append(holds)
    return holds


def solve_holds_of(
    *, problems: Collection[str], now: dt.datetime
) -> dict[str, list[tuple[dt.datetime, dt.datetime]]]:
    """Every registered source's hold windows of these problems, together."""
    windows: dict[str, list[tuple[dt.datetime, dt.datetime]]] = {}
    for holds in _solve_holds:
        for slug, found in holds(problems=problems, now=now).items():
            windows.setdefault(slug, []).extend(found)
    return windows

"""Finding programmers and accounts: by the start of a handle (with their places on a board day),
by a whole handle in any case, and the account a login names."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.db.models.functions import Lower

from .. import leaderboard
from ..clock import today
from ..models import Board, Programmer, handle_key
from .standings import Around, programmers_places

HANDLE_MATCHES_MAX = 20  # matches listed at once, on the board page and in the API
# Matches are counted this far and no further ("at least 980 more"): a count that
# stops keeps a one-letter search as cheap at a million programmers as at a thousand.
HANDLE_MATCHES_COUNTED = 1000


def programmer_by_handle(handle: str) -> Programmer | None:
    return Programmer.objects.handle_is(handle).first()


def users_logging_in_as(handle: str) -> QuerySet[User]:
    """The users whose login name is `handle` in any case: an equality on LOWER(username), which
    the index of migration 0009 serves (``username__iexact`` is a scan of the users table)."""
    return User.objects.alias(key=Lower("username")).filter(key=handle.lower())


def user_logging_in_as(name: str) -> User | None:
    """The account a login names. A handle is a login name, and handles are unique without
    case (sign-up refuses a handle that is somebody's login name in any case), so any case of
    one names its account: the user with exactly this username, else the user of the programmer
    whose handle it is (`Programmer.objects.handle_is`), else the one user whose username it is
    in any case (staff without a programmer). Each is one indexed equality."""
    exact = User.objects.filter(username=name).first()
    if exact is not None:
        return exact
    programmer = Programmer.objects.handle_is(name).select_related("user").first()
    if programmer is not None and programmer.user is not None:
        return programmer.user
    found = list(users_logging_in_as(name)[:2])
    return found[0] if len(found) == 1 else None


def _prefix_end(prefix: str) -> str:
    """The first key after every key that starts with `prefix`: its last character, plus one."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def programmers_starting_with(*, prefix: str) -> QuerySet[Programmer]:
    """The programmers whose handle starts with `prefix` (a non-empty run of handle characters,
    any case), in handle order: a range of the handle key, which the unique index on it serves
    on SQLite and PostgreSQL. Hidden and banned programmers are left out, as the boards leave
    them out: staff hide them from the public, and a search is public."""
    low = prefix.lower()
    return (
        Programmer.objects.alias(key=handle_key())
        .filter(key__gte=low, key__lt=_prefix_end(low), hidden=False, banned=False)
        .order_by("key")
    )


@dataclass(frozen=True)
class HandleMatch:
    """A programmer whose handle starts with what was searched, and their place on the board
    (rank None: not on it that day, or not in the group)."""

    programmer: Programmer
    rank: int | None
    score: int

    @property
    def handle(self) -> str:
        return self.programmer.handle


@dataclass(frozen=True)
class HandleMatches:
    """The answer to a search by the start of a handle on one board day."""

    board: Board
    day: int
    prefix: str
    total: int  # programmers on the board that day
    matches: list[HandleMatch]
    more: int  # matches past the list, counted up to HANDLE_MATCHES_COUNTED matches in all
    one: Around | None = None  # the one programmer searched for, with their neighbours

    @property
    def date(self) -> dt.date:
        return leaderboard.day_to_date(self.day)

    @property
    def count(self) -> int:
        """How many match (all of them when `count_is_exact`, else at least this many)."""
        return len(self.matches) + self.more

    @property
    def count_is_exact(self) -> bool:
        return self.count < HANDLE_MATCHES_COUNTED

    def named(self, handle: str) -> HandleMatch | None:
        """The match whose whole handle is `handle` (any case), if any: a handle comes before
        every longer one starting with it, so when it matches it is listed first."""
        return next((m for m in self.matches if m.handle.lower() == handle.lower()), None)


def programmers_search(
    *,
    board: Board,
    prefix: str,
    day: int | None = None,
    scope: str = "",
    limit: int = HANDLE_MATCHES_MAX,
    around: int = 0,
) -> HandleMatches:
    """The programmers whose handle starts with `prefix`, at most `limit` in handle order, each
    with their rank and score on a board day, and how many more match; with `around`, the one
    programmer it names (the only match, or a handle given in full) with that many programmers
    above and below. At any number of programmers: one SQL range read of the handle index (a
    second, counting at most HANDLE_MATCHES_COUNTED, only when the list is full) and the reads
    of `programmers_places`."""
    day = today() if day is None else day
    found = programmers_starting_with(prefix=prefix).only("handle", "hidden", "banned")
    listed = list(found[: limit + 1])
    more = 0
    if len(listed) > limit:
        listed = listed[:limit]
        more = found[:HANDLE_MATCHES_COUNTED].count() - limit
    named = [p for p in listed if p.handle.lower() == prefix.lower()]
    one = (named or (listed if len(listed) == 1 and not more else []))[:1]
    places = programmers_places(
        board=board,
        programmers=listed,
        day=day,
        scope=scope,
        around_of=one[0] if one and around else None,
        around=around,
    )
    matches = []
    for programmer in listed:
        row = places.rows.get(programmer.pk)
        matches.append(HandleMatch(programmer, row.rank if row else None, row.score if row else 0))
    return HandleMatches(board, day, prefix, places.total, matches, more, places.around)

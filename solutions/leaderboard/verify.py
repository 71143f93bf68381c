"""Checking the orders against the entries: every board day listed as the seed's query lists it.

The orders reach each board's frontier (today, or tomorrow in the last hour of today, see
`day_change`): the days after it are in the entries alone, and are not compared.

Two stores hold a board. The **entries** are what a solve counts in (see `entries`); the
**orders** are the listing order of every board day that requests read by `_id` (sorted sets,
nodes and a manifest, with the board's journal laid over them: see `orders` and `reading`). The
applier keeps the orders after the entries, and a rebuild makes both anew from the `solves`
log. This module asks whether they agree: for each board day kept and each scope (everybody and
each group), the order walked from its root (`reading.members_in_order`) must list exactly the
members that the seed's sorted per-day query finds in the entries (`entries.entries_by_key`:
``find({"keys.D": {"$gt": 0}}).sort({"keys.D": -1})``, ties in the order's own tie order), in
the same order.

**Which orders.** Every order stored (its root's `_id` in ``orders`` is ``board|day|scope``; the
board's journal, ``board|journal``, is not an order), every one so far only in the journal, and
every one the entries put somebody in (`entries.entries_places`), so an order that was lost
shows too. Days before the history kept are left out: no move reaches their orders any more,
and beat deletes them. The group ranklists (scopes ``groups:country`` and ``groups:org``, see
`groups`) list groups, not programmers: no query of the entries lists them.

**A difference** is one member, **missing** (on the day by the entries, not listed), **extra**
(listed, not on the day by the entries) or **misplaced** (in both, but listed with another key
or handle, or out of order). Out of order counts the fewest members whose moving would put the
listing right (those off a longest run listed in the entries' order), so one programmer in the
wrong place is one difference, not every member between their two places.

**Cost.** Each board day and scope is a walk of its order, a few sets at a time, and the query:
on real MongoDB served by the wildcard index ``keys.$**``, one index key a member of the day (a
group's day too: its scope is filtered in Python, see `entries.entries_by_key`); the embedded
server (SecantusDB 0.7) never uses a wildcard index and scans the board's whole collection for
each. Both are compared as they stream while they agree; only after a first difference is the
rest of both held in memory. A rebuild-time tool (``rebuild_boards --verify``), never on a
request. The two stores are read at different moments, so a solve applied in between can show
as a difference: check a quiet site, or check again.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from . import days_kept, encoding, entries, groups, journals, maths, orders, reading


@dataclass(frozen=True)
class Difference:
    """One member on which a board day's order and the query disagree: `wanted` as the entries
    have them (None: extra) at 0-based place `expected`, `held` as the order lists them (None:
    missing) at place `listed`."""

    day_key: str
    scope: str
    wanted: encoding.Member | None
    held: encoding.Member | None
    expected: int | None
    listed: int | None

    @property
    def kind(self) -> str:
        if self.held is None:
            return "missing"
        return "extra" if self.wanted is None else "misplaced"

    def __str__(self) -> str:
        all_time = self.day_key == maths.ALL_TIME_KEY
        day = "all time" if all_time else maths.day_to_date(int(self.day_key)).isoformat()
        who = self.wanted or self.held
        said = f"{day}, {self.scope or 'everybody'}: {who.handle} (id {who.programmer_id})"
        if self.held is None:
            return f"{said} missing: the entries put them at {_at(self.expected, self.wanted)}"
        listed = _at(self.listed, self.held)
        if self.wanted is None:
            return f"{said} extra: listed at {listed}, on the day by no entry"
        wanted = _at(self.expected, self.wanted)
        return f"{said} misplaced: listed at {listed}, the entries put them at {wanted}"


def _at(place: int, member: encoding.Member) -> str:
    return f"place {place + 1} with score {member.score}"


@dataclass
class VerifyReport:
    """What checking a board found: the (day, scope) of each order compared, how many members
    the entries put in them, and every difference."""

    board: str
    compared: list[tuple[str, str]] = field(default_factory=list)
    members: int = 0
    differences: list[Difference] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return not self.differences


def board_verify(board_slug: str, today: int | None = None) -> VerifyReport:
    """Compare every order of a board's days kept (from `today`'s history on) with the query."""
    today = days_kept.current_day() if today is None else today
    oldest_day = days_kept.history_from(today)
    frontier = journals.journal_heads([board_slug])[board_slug].frontier
    frontier = today if frontier is None else frontier
    report = VerifyReport(board=board_slug)
    stored = _orders_stored(board_slug, oldest_day)
    places = stored | entries.entries_places(board_slug, oldest_day, frontier)
    for day_key, scope in sorted(places):
        members, differences = order_compare(
            day_key,
            scope,
            reading.members_in_order(board_slug, day_key, scope),
            entries.entries_by_key(board_slug, day_key, scope),
        )
        report.compared.append((day_key, scope))
        report.members += members
        report.differences += differences
    return report


def _orders_stored(board_slug: str, oldest_day: int) -> set[tuple[str, str]]:
    """{(day, scope)} of the board's orders of programmers from `oldest_day` on: those with a
    root (a scan of the roots' ids) and those so far only in the journal (its parts)."""
    places = set()
    board_prefix = {"$regex": f"^{re.escape(board_slug)}\\|"}
    for root in orders.orders().find({"_id": board_prefix}, {"_id": 1}):
        parts = root["_id"].split("|", 2)
        if len(parts) == 3:  # not the board's journal
            places.add((parts[1], parts[2]))
    journal = orders.orders().find_one({"_id": journals.journal_id(board_slug)}, {"p": 1})
    parts = (journal or {}).get("p", {})
    places.update(journals.part_order(key) for key, pairs in parts.items() if pairs)
    return {
        (day_key, scope)
        for day_key, scope in places
        if (day_key == maths.ALL_TIME_KEY or int(day_key) >= oldest_day)
        and not groups.is_ranklist(scope)
    }


def order_compare(
    day_key: str, scope: str, listed: Iterable[encoding.Member], wanted: Iterable[encoding.Member]
) -> tuple[int, list[Difference]]:
    """(members the entries put on the day, differences) of a board day's order: `listed` as
    the order lists them, `wanted` as the query finds them, both in listing order. They are
    compared as they stream; from a first difference on, the rest of both is matched up."""
    listed, wanted = iter(listed), iter(wanted)
    agreed = 0
    for held, want in itertools.zip_longest(listed, wanted):
        if held != want:
            rest_held = ([held] if held else []) + list(listed)
            rest_wanted = ([want] if want else []) + list(wanted)
            return agreed + len(rest_wanted), _differences(
                day_key, scope, agreed, rest_held, rest_wanted
            )
        agreed += 1
    return agreed, []


def _differences(
    day_key: str,
    scope: str,
    offset: int,
    held: list[encoding.Member],
    wanted: list[encoding.Member],
) -> list[Difference]:
    """The differences of two listings that start at 0-based place `offset`, matched up by
    programmer."""

    def difference(i: int | None, j: int | None) -> Difference:
        return Difference(
            day_key,
            scope,
            wanted=None if j is None else wanted[j],
            held=None if i is None else held[i],
            expected=None if j is None else offset + j,
            listed=None if i is None else offset + i,
        )

    wanted_at = {member.programmer_id: j for j, member in enumerate(wanted)}
    listed_at: dict[int, int] = {}
    found = []
    for i, member in enumerate(held):
        if member.programmer_id in listed_at or member.programmer_id not in wanted_at:
            found.append(difference(i, None))  # listed twice, or not on the day at all
        else:
            listed_at[member.programmer_id] = i
    found += [difference(None, j) for pid, j in wanted_at.items() if pid not in listed_at]
    # In both: in place when listed as the entries have them, in the order of a longest run.
    both = [(i, wanted_at[pid]) for pid, i in listed_at.items()]
    alike = [(i, j) for i, j in both if held[i] == wanted[j]]
    in_place = {alike[k] for k in _longest_rising([j for _i, j in alike])}
    found += [difference(i, j) for i, j in both if (i, j) not in in_place]
    return sorted(found, key=lambda d: d.listed if d.expected is None else d.expected)


def _longest_rising(places: list[int]) -> list[int]:
    """The indexes of a longest strictly rising subsequence of `places` (patience sorting)."""
    ends: list[int] = []  # ends[k]: the smallest last place of a rising run of k + 1
    end_at: list[int] = []  # ... and its index
    before: list[int] = []  # the index before each one in its run (-1: first)
    for index, place in enumerate(places):
        k = bisect.bisect_left(ends, place)
        before.append(end_at[k - 1] if k else -1)
        if k == len(ends):
            ends.append(place)
            end_at.append(index)
        else:
            ends[k], end_at[k] = place, index
    run, index = [], end_at[-1] if end_at else -1
    while index >= 0:
        run.append(index)
        index = before[index]
    return run[::-1]

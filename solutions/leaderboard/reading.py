"""Reading an order: a page, a rank or a neighbourhood of a board day, by `_id` at any size.

**Reading** a page, a rank or a neighbourhood is the day's part of the journal, the manifest
(asking only for the columns it uses) and at most one read of sets, all by `_id`, at any size.
The journal's pairs are laid over the manifest as departures and arrivals (`sets.Manifest
.journal_lay`) unless the manifest already holds that epoch.

A writer writes a set before its manifest (see `orders`): a reader that finds a set newer than
the manifest's entry for it reads again, and on its last try takes the sets as they are.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from . import journals, orders, sets

READ_RETRIES = 3
T = TypeVar("T")


def _manifest_read(board_slug: str, day_key: str, scope: str, fields: dict) -> sets.Manifest:
    """A board day's manifest as a reader sees it: with the moves of the board's journal that it
    does not hold yet laid over it. Two `_id` reads, the journal's part first: a fold writes the
    manifests before it empties the journal, so a part read before the manifest is either still
    to be laid (the manifest's `folded` is older than the part's epoch) or already in it."""
    epoch, pairs = journals.journal_part(board_slug, day_key, scope)
    manifest = orders.manifest_read(orders.order_id(board_slug, day_key, scope), fields)
    if manifest.folded < epoch:
        manifest.journal_lay(pairs)
    return manifest


def histogram_read(board_slug: str, day_key: str, scope: str = "") -> dict[int, int]:
    """{score: number of programmers} of one board day: two `_id` reads."""
    return _manifest_read(board_slug, day_key, scope, orders.HISTOGRAM).histogram


class _Behind(Exception):
    """A set is newer than its manifest entry: a writer is between the two writes."""


def _records(order: str, manifest: sets.Manifest, indexes: Iterable[int], last_try: bool):
    """The records of the listed sets with their arrivals, in order. A set newer than the
    manifest means a writer is between writing it and the manifest: read again, or on the last
    try take the sets as they are and recompute the manifest's entries from them."""
    chosen = sorted(set(indexes))
    listed = {i: (manifest.set_id(i), manifest.set_version(i)) for i in chosen}
    external = [set_id for set_id, _v in listed.values() if set_id not in manifest.inline]
    stored = {**manifest.inline, **orders.sets_fetch(order, external)}
    if any(stored.get(set_id, (None,))[0] != version for set_id, version in listed.values()):
        if not last_try:
            raise _Behind
        sets.manifest_repair(manifest, stored)
    records: list[bytes] = []
    for set_id, _version in listed.values():
        written = sets.records_of(stored.get(set_id, (0, b""))[1])
        if departed := manifest.departures_of(set_id):
            written = [record for record in written if record not in departed]
        arrived = manifest.arrivals_of(set_id)
        records += sorted(written + arrived) if arrived else written
    return records


def _reading(read: Callable[[bool], T]) -> T:
    """Run a manifest-then-sets read, again if a writer was caught between its two writes."""
    for attempt in range(READ_RETRIES):
        try:
            return read(attempt == READ_RETRIES - 1)
        except _Behind:
            time.sleep(0.002 * (attempt + 1))
    raise AssertionError("unreachable: the last try never raises")


def order_page(
    board_slug: str, day_key: str, scope: str, offset: int, limit: int
) -> tuple[dict[int, int], list[sets.Member]]:
    """A board day's histogram and `limit` members from 0-based `offset`, in listing order: the
    manifest, then the one or two sets holding them (two `_id` reads at any offset and size)."""
    histogram, records = order_records(board_slug, day_key, scope, offset, limit)
    return histogram, [sets.Member.from_record(record) for record in records]


def order_records(
    board_slug: str, day_key: str, scope: str, offset: int, limit: int
) -> tuple[dict[int, int], list[bytes]]:
    """`order_page` as the records themselves (a group ranklist's are not programmers)."""
    order = orders.order_id(board_slug, day_key, scope)

    def read(last_try: bool) -> tuple[dict[int, int], list[bytes]]:
        manifest = _manifest_read(board_slug, day_key, scope, orders.PAGE)
        first = manifest.set_at(offset)
        if first is None or limit <= 0:
            return manifest.histogram, []
        index, inside = first
        lengths = manifest.set_lengths()
        wanted, covered = [index], lengths[index] - inside
        while covered < limit and wanted[-1] + 1 < len(lengths):
            wanted.append(wanted[-1] + 1)
            covered += lengths[wanted[-1]]
        records = _records(order, manifest, wanted, last_try)
        return manifest.histogram, records[inside : inside + limit]

    return _reading(read)


def member_position(board_slug: str, day_key: str, scope: str, member: sets.Member) -> int | None:
    """A member's 0-based place in the listing order of a board day (None: not listed): the
    manifest, bisected with their sort bytes, then one set."""
    order = orders.order_id(board_slug, day_key, scope)
    record = member.record()

    def read(last_try: bool) -> int | None:
        manifest = _manifest_read(board_slug, day_key, scope, orders.PAGE)
        index = manifest.set_for(record)
        if index < 0:
            return None
        records = _records(order, manifest, [index], last_try)
        position = bisect.bisect_left(records, record)
        if position >= len(records) or records[position] != record:
            return None
        return manifest.offset_of_set(index) + position

    return _reading(read)


def records_before(board_slug: str, day_key: str, scope: str, probe: bytes) -> int:
    """How many members of a board day's order sort before the bytes `probe` (a record's width):
    the manifest, bisected, then one set. Sets are cut only where separators differ, so every
    member of the sets before the one found sorts before `probe`, and none of those after."""
    order = orders.order_id(board_slug, day_key, scope)

    def read(last_try: bool) -> int:
        manifest = _manifest_read(board_slug, day_key, scope, orders.PAGE)
        index = manifest.set_for(probe)
        if index < 0:
            return 0
        records = _records(order, manifest, [index], last_try)
        return manifest.offset_of_set(index) + bisect.bisect_left(records, probe)

    return _reading(read)


def members_in_order(board_slug: str, day_key: str, scope: str = "") -> Iterator[sets.Member]:
    """Every member of a board day in listing order, a few sets at a time (background work such
    as rank-history snapshots: its cost grows with the board, so never on a request)."""
    order = orders.order_id(board_slug, day_key, scope)
    manifest = _manifest_read(board_slug, day_key, scope, orders.PAGE)
    for start in range(0, len(manifest), 16):
        chosen = range(start, min(start + 16, len(manifest)))
        for record in _records(order, manifest, chosen, last_try=True):
            yield sets.Member.from_record(record)

"""A board's whole stored state computed in bulk from the `solves` log: entries, then orders.

The incremental path (a solve at a time, `applier`) and this one must leave exactly the same
boards; `tests/test_rebuild.py` checks it on random streams with late and repeated solves.

Memory stays bounded however long the log: the solves arrive in programmer order (the caller
streams them), so only one programmer's solves are in memory at a time and entries are written in
batches; the orders are then built from the entries in one pass that spills each order's records
to a scratch file, and each order is sorted and cut into sets on its own. Each group's order
gives its group's record in the day's ranklist (`groups`), spilled the same way, and the
ranklists are built last.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pymongo import InsertOne, ReplaceOne
from pymongo.collection import Collection

from . import applier, entries, groups, maths, moving, orders, sets

BATCH = 1_000
SPILL_BYTES = 1 << 20  # buffer this much of an order's records before appending to its file
WRITE_BYTES = 8 << 20  # sets written per command: well under a server's 48 MB message


@dataclass(frozen=True)
class Identity:
    """Who an entry belongs to, as the boards show them."""

    programmer_id: int
    handle: str
    groups: tuple[str, ...]


def entry_from_solves(
    window: maths.Window,
    value_of: Callable[[int], int],
    who: Identity,
    solves: list[dict],
    today: int,
    time_zone: str,
) -> dict | None:
    """The entry a board should hold for a programmer, computed from their solves alone
    (`points` and `solved_at` of each): exactly what the incremental updates leave behind for
    every day still kept."""
    if not solves:
        return None
    document = {"_id": who.programmer_id, "handle": who.handle, "groups": list(who.groups)}
    if window.streak:
        return document | _streak_fields(window, solves, today, time_zone)
    daily, latest = _daily(value_of, solves, time_zone)
    if window.is_all_time:
        key = maths.ALL_TIME_KEY
        total, reached = sum(daily.values()), max(latest.values())
        return {
            **document,
            "sums": {key: total},
            "last": {key: reached},
            "keys": {key: maths.sort_key(total, reached)},
        }
    return document | _window_fields(window, daily, latest, today)


def _daily(
    value_of: Callable[[int], int], solves: list[dict], time_zone: str
) -> tuple[dict[int, int], dict[int, dt.datetime]]:
    """({epoch day: count}, {epoch day: the latest solve time that day}) of some solves."""
    daily: dict[int, int] = defaultdict(int)
    latest: dict[int, dt.datetime] = {}
    for solve in solves:
        day = maths.epoch_day(solve["solved_at"], time_zone)
        daily[day] += value_of(solve["points"])
        latest[day] = max(latest.get(day, solve["solved_at"]), solve["solved_at"])
    return daily, latest


def _streak_fields(window: maths.Window, solves: list[dict], today: int, time_zone: str) -> dict:
    """A streak board's entry (see `maths.streak_scores`): the recent solve days' first times
    and the first days of their runs, and each kept day's current streak (all time: the
    longest)."""
    first: dict[int, dt.datetime] = {}
    for solve in solves:
        day = maths.epoch_day(solve["solved_at"], time_zone)
        first[day] = min(first.get(day, solve["solved_at"]), solve["solved_at"])
    oldest_run = entries.streaks_from(today)
    fields = {
        "first": {str(d): t for d, t in first.items() if d >= oldest_run},
        "began": {str(d): s for d, s in maths.streak_starts(first).items() if d >= oldest_run},
    }
    if window.is_all_time:
        key = maths.ALL_TIME_KEY
        length, reached = maths.longest_streak_score(first)
        return fields | {"sums": {key: length}, "keys": {key: maths.sort_key(length, reached)}}
    oldest_kept = entries.history_from(today)
    scores = {d: score for d, score in maths.streak_scores(first).items() if d >= oldest_kept}
    return fields | {
        "sums": {str(d): length for d, (length, _) in scores.items()},
        "keys": {str(d): maths.sort_key(*score) for d, score in scores.items()},
    }


def _window_fields(
    window: maths.Window, daily: dict[int, int], latest: dict[int, dt.datetime], today: int
) -> dict:
    """The counts, sums and keys of a windowed board's entry, for the days still kept."""
    oldest_kept = entries.history_from(today)
    board_days = sorted({d for day in daily for d in window.affected_days(day) if d >= oldest_kept})
    sums = maths.window_sums(daily, window, board_days)
    oldest_count = entries.counts_from(window, today)
    return {
        "days": {str(d): n for d, n in daily.items() if d >= oldest_count},
        "last": {str(d): t for d, t in latest.items() if d >= oldest_count},
        "sums": {str(d): s for d, s in sums.items()},
        "keys": {
            str(d): maths.sort_key(s, maths.reached_at(latest, window, d)) for d, s in sums.items()
        },
    }


def comparable(entry: dict) -> dict:
    """An entry without the engine's bookkeeping, to compare with what a rebuild computes."""
    return {k: v for k, v in entry.items() if k not in ("applied", "placed", "rev", "trimmed")}


@dataclass
class RebuildReport:
    board: str
    entries: int = 0
    changed: int = 0
    removed: int = 0
    orders: int = 0
    changed_ids: list[int] = field(default_factory=list)


def board_rebuild(
    board_slug: str, computed: Iterable[tuple[dict, list[str]]], today: int, dry_run: bool
) -> RebuildReport:
    """Make a board's stored entries and orders those computed from the log (`computed`: each
    entry with the ids of its solves, streamed); a dry run only reports what would change."""
    report = RebuildReport(board=board_slug)
    writer = _EntryWriter(entries.entries(board_slug), report, dry_run)
    with tempfile.TemporaryDirectory(prefix="orders-") as scratch:
        spill = _Spill(board_slug, entries.history_from(today), Path(scratch))
        for document, solve_ids in computed:
            # The latest solves' ids, so a late retry of one of them still counts nothing; and
            # what the orders hold once they are built from these entries below.
            document["applied"] = sorted(solve_ids)[-entries.APPLIED_KEPT :]
            document["placed"] = entries.placement(document)
            spill.add(document)
            writer.add(document)
        writer.flush()
        report.entries = len(writer.seen)
        report.changed_ids.sort()
        report.changed = len(report.changed_ids)
        stale = writer.stale()
        report.removed = len(stale)
        if dry_run:
            return report
        for start in range(0, len(stale), BATCH):
            writer.collection.delete_many({"_id": {"$in": stale[start : start + BATCH]}})
        orders.group_names_write(spill.scopes)
        ranked = Path(scratch) / "ranklists"  # files of their own: each spill numbers its files
        ranked.mkdir()
        report.orders = _orders_build(board_slug, spill, _Spill(board_slug, 0, ranked))
    return report


class _EntryWriter:
    """Writes the computed entries that differ from the stored ones, a batch at a time, and
    notes them in the report (a dry run only notes them)."""

    def __init__(self, collection: Collection, report: RebuildReport, dry_run: bool) -> None:
        self.collection, self.report, self.dry_run = collection, report, dry_run
        self.was_empty = collection.estimated_document_count() == 0
        self.seen: set[int] = set()
        self.batch: list[dict] = []

    def add(self, document: dict) -> None:
        self.seen.add(document["_id"])
        self.batch.append(document)
        if len(self.batch) == BATCH:
            self.flush()

    def flush(self) -> None:
        if not self.batch:
            return
        ids = [doc["_id"] for doc in self.batch]
        found = [] if self.was_empty else self.collection.find({"_id": {"$in": ids}})
        current = {doc["_id"]: comparable(doc) for doc in found}
        changed = [doc for doc in self.batch if current.get(doc["_id"]) != comparable(doc)]
        self.report.changed_ids += [doc["_id"] for doc in changed]
        if changed and not self.dry_run:
            self.collection.bulk_write(
                [
                    ReplaceOne({"_id": doc["_id"]}, doc)
                    if doc["_id"] in current
                    else InsertOne(doc)
                    for doc in changed
                ],
                ordered=False,
            )
        self.batch.clear()

    def stale(self) -> list[int]:
        """The stored entries of programmers the log no longer puts on the board (a scan: a
        rebuild's tool)."""
        if self.was_empty:
            return []
        stored = (doc["_id"] for doc in self.collection.find({}, {"_id": 1}))
        return [pid for pid in stored if pid not in self.seen]


def _orders_build(board_slug: str, spill: _Spill, ranklists: _Spill) -> int:
    """Replace a board's orders with those of the spilled records, each order sorted on its own
    and cut into half-full sets, written in batches; then the ranklists of the groups' orders.
    Returns how many orders were written."""
    orders.orders_forget(board_slug)

    def ranked(order: str, manifest: sets.Manifest) -> None:
        day_key, scope = spill.places[order]
        kind = groups.kind_of(scope)
        if kind and (record := groups.record(scope, manifest.histogram)):
            ranklists.append(
                orders.order_id(board_slug, day_key, groups.ranklist_scope(kind)), record
            )

    written = _orders_sort_and_write(spill.files(), ranked)
    written += _orders_sort_and_write(ranklists.files())
    applier.pending_clear(board_slug)
    return written


def _orders_sort_and_write(
    files: dict[str, Path], built_one: Callable[[str, sets.Manifest], object] = lambda *_: None
) -> int:
    """Each order of these files sorted and cut into sets, written a few MB at a time; `built_one`
    is told of each order built."""
    built: dict = {}
    for order, path in files.items():
        records = sets.records_of(path.read_bytes())
        records.sort()
        built[order] = moving.sets_build(records)
        built_one(order, built[order][0])
        if (
            sum(len(blob) for _m, r in built.values() for _v, blob in r.written.values())
            > WRITE_BYTES
        ):
            orders.orders_write(built)
            built.clear()
    orders.orders_write(built)
    return len(files)


class _Spill:
    """Each entry's member records appended to its orders' scratch files, so memory holds only
    a little of each order whatever the size of the board."""

    def __init__(self, board_slug: str, oldest_day: int, scratch: Path) -> None:
        self.board_slug, self.oldest_day, self.scratch = board_slug, oldest_day, scratch
        self.buffers: dict[str, bytearray] = defaultdict(bytearray)
        self.paths: dict[str, Path] = {}
        self.places: dict[str, tuple[str, str]] = {}  # order: (day, scope)
        self.scopes: set[str] = set()  # every group of the entries added

    def add(self, entry: dict) -> None:
        scopes = ["", *entry.get("groups", [])]
        self.scopes.update(scopes[1:])
        tail = sets.handle_bytes(entry["handle"], entry["_id"])
        for day_key, key in entry.get("keys", {}).items():
            if key <= 0 or (day_key != maths.ALL_TIME_KEY and int(day_key) < self.oldest_day):
                continue
            record = (sets.MAX_KEY - key).to_bytes(8, "big") + tail
            for scope in scopes:
                order = orders.order_id(self.board_slug, day_key, scope)
                self.places.setdefault(order, (day_key, scope))
                self.append(order, record)

    def append(self, order: str, record: bytes) -> None:
        self.buffers[order] += record
        if len(self.buffers[order]) >= SPILL_BYTES:
            self._write(order)

    def files(self) -> dict[str, Path]:
        for order in list(self.buffers):
            self._write(order)
        return self.paths

    def _write(self, order: str) -> None:
        if order not in self.paths:
            self.paths[order] = self.scratch / f"{len(self.paths)}.bin"
        with self.paths[order].open("ab") as file:
            file.write(self.buffers.pop(order))

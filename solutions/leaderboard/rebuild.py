"""A board's whole stored state computed in bulk from the `solves` log: entries, then orders.

The incremental path (a solve at a time, `applier`) and this one must leave exactly the same
boards; `tests/test_rebuild.py` checks it on random streams with late and repeated solves. Each
entry comes computed from a programmer's solves (`entries.from_solves`).

Memory stays bounded however long the log: the solves arrive in programmer order (the caller
streams them), so only one programmer's solves are in memory at a time and entries are written in
batches; the orders are then built from the entries in one pass that spills each order's records
to a scratch file, and each order is sorted and cut into sets on its own. Each group's order
gives its group's record in the day's ranklist (`groups`), spilled the same way, and the
ranklists are built last.
"""

from __future__ import annotations

import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from pymongo import InsertOne, ReplaceOne
from pymongo.collection import Collection

from .. import mongo
from . import (
    day_change,
    days_kept,
    encoding,
    entries,
    groups,
    lease,
    maths,
    moving,
    order_writes,
    orders,
)

BATCH = 1_000
SPILL_BYTES = 1 << 20  # buffer this much of an order's records before appending to its file
WRITE_BYTES = 8 << 20  # sets written per command: well under a server's 48 MB message


@dataclass
class RebuildReport:
    board: str
    entries: int = 0
    changed: int = 0
    removed: int = 0
    orders: int = 0
    changed_ids: list[int] = field(default_factory=list)


class Progress:
    """Told how far a long build is: this one does nothing; the import's progress bar is one."""

    def phase(self, name: str, total: int | None = None, unit: str = "") -> None:
        """A new step begins, of `total` things (`unit`) to do when known."""

    def advance(self, count: int = 1) -> None:
        """`count` more things of the step done."""


QUIET = Progress()


def board_rebuild(
    board_slug: str,
    window: maths.Window,
    computed: Iterable[tuple[dict, list[str]]],
    today: int,
    dry_run: bool,
) -> RebuildReport:
    """Make a board's stored entries and orders those computed from the log (`computed`: each
    entry with the ids of its solves, streamed); a dry run only reports what would change."""
    build = BoardBuild(board_slug, window, today, dry_run)
    for document, solve_ids in computed:
        build.add(document, solve_ids)
    return build.finish()


class BoardBuild:
    """One board's rebuild, given its computed entries one at a time (`add`), then finished:
    one pass over the log can feed every board at once. The orders are built up to today, the
    board's frontier from then on (see `day_change`)."""

    def __init__(self, board_slug: str, window: maths.Window, today: int, dry_run: bool) -> None:
        self.board_slug, self.window, self.today, self.dry_run = board_slug, window, today, dry_run
        self.report = RebuildReport(board=board_slug)
        self._writer = _EntryWriter(entries.entries(board_slug), self.report, dry_run)
        self._scratch = tempfile.TemporaryDirectory(prefix="orders-")
        oldest = days_kept.history_from(today)
        self._spill = _Spill(board_slug, oldest, today, Path(self._scratch.name))

    def add(self, document: dict, solve_ids: list[str]) -> None:
        """A programmer's entry computed from the log, with the ids of its solves."""
        # The orders are built from these entries below: they will hold each as it is.
        document = entries.placed_as_is(entries.applied_with(document, solve_ids))
        self._spill.add(document)
        self._writer.add(document)

    def absent(self, programmer_id: int) -> None:
        """A programmer the log does not put on the board: a stored entry of theirs goes."""
        self._writer.absent(programmer_id)

    def finish(self, progress: Progress = QUIET) -> RebuildReport:
        """Write the rest of the entries, remove those the log no longer has, then the orders
        (`progress` is told of each order)."""
        try:
            return self._finish(progress)
        finally:
            self._scratch.cleanup()

    def _finish(self, progress: Progress) -> RebuildReport:
        report, writer = self.report, self._writer
        if writer.indexes:
            progress.phase(f"indexes of {self.board_slug}")
        writer.finish()
        report.entries = writer.computed
        report.changed_ids.sort()
        report.changed = len(report.changed_ids)
        stale = writer.stale
        report.removed = len(stale)
        if self.dry_run:
            return report
        mongo.delete_by_ids(writer.collection, stale)
        orders.group_names_write(self._spill.scopes)
        ranked = Path(self._scratch.name) / "ranklists"  # each spill numbers its files from 0
        ranked.mkdir()
        ranklists = _Spill(self.board_slug, 0, self.today, ranked)
        report.orders = _orders_build(self.board_slug, self._spill, ranklists, progress)
        day_change.frontier_start(self.board_slug, self.window, self.today)
        return report


class _EntryWriter:
    """Writes the computed entries that differ from the stored ones, a batch at a time, and
    notes them in the report (a dry run only notes them); finds the stored entries of the
    programmers the log does not put on the board (`stale`), to be removed.

    Both are found by reading the batch's ids (`$in`, point reads): a scan of the board would
    be simpler, but the embedded server decodes every document of a collection to answer any
    read that is not on `_id` or a plain index's values, holding them all at once (a million
    entries are some 18 GB: the kernel stopped it). So a stored entry is found only for a
    programmer the rebuild walks: every programmer row, since rows are never deleted (a deleted
    account keeps its row, `account_delete`). An entry under an id no programmer has, which
    only damage can leave, is no order's and so no page's; `rebuild_boards --verify` names it.

    Each batch is written by a thread of its own while the next one is computed (one write in
    flight). Into an empty collection (a first build, an import into a new site) the entries are
    written without the wildcard indexes, made again once they are all in
    (`mongo.indexes_set_aside`); nothing on a request path reads them."""

    def __init__(self, collection: Collection, report: RebuildReport, dry_run: bool) -> None:
        self.collection, self.report, self.dry_run = collection, report, dry_run
        self.was_empty = collection.estimated_document_count() == 0
        self.computed = 0  # entries given to write (or to find unchanged)
        self.stale: list[int] = []  # ids of stored entries the log does not put on the board
        self.batch: list[dict] = []
        self.absent_ids: list[int] = []  # of the batch's programmers not on the board
        self.indexes = mongo.indexes_set_aside(collection) if self.was_empty and not dry_run else []
        self._writing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="entries")
        self._written: Future | None = None

    def add(self, document: dict) -> None:
        self.computed += 1
        self.batch.append(document)
        self._flush_when_full()

    def absent(self, programmer_id: int) -> None:
        if not self.was_empty:
            self.absent_ids.append(programmer_id)
            self._flush_when_full()

    def _flush_when_full(self) -> None:
        if len(self.batch) + len(self.absent_ids) >= BATCH:
            self.flush()

    def flush(self) -> None:
        ids = [doc["_id"] for doc in self.batch] + self.absent_ids
        found = [] if self.was_empty else mongo.find_by_ids(self.collection, ids)
        current = {doc["_id"]: entries.comparable(doc) for doc in found}
        self.stale += [pid for pid in self.absent_ids if pid in current]
        changed = [doc for doc in self.batch if current.get(doc["_id"]) != entries.comparable(doc)]
        self.report.changed_ids += [doc["_id"] for doc in changed]
        if changed and not self.dry_run:
            writes = [
                ReplaceOne({"_id": doc["_id"]}, doc) if doc["_id"] in current else InsertOne(doc)
                for doc in changed
            ]
            self._wait()
            self._written = self._writing.submit(self.collection.bulk_write, writes, ordered=False)
        self.batch, self.absent_ids = [], []

    def _wait(self) -> None:
        """Until the write in flight is done (raising what it raised)."""
        if self._written is not None:
            written, self._written = self._written, None
            written.result()

    def finish(self) -> None:
        """Write the last batch, wait for every write, then make the indexes dropped again."""
        try:
            self.flush()
            self._wait()
        finally:
            self._writing.shutdown()
        mongo.indexes_restore(self.collection, self.indexes)


def _orders_build(
    board_slug: str, spill: _Spill, ranklists: _Spill, progress: Progress = QUIET
) -> int:
    """Replace a board's orders with those of the spilled records, each order sorted on its own
    and cut into half-full sets, written in batches; then the ranklists of the groups' orders.
    Returns how many orders were written."""
    orders.orders_forget(board_slug)
    files = spill.files()
    progress.phase(f"orders of {board_slug}", len(files), "orders")

    def ranked(order: str, records: list[bytes]) -> None:
        day_key, scope = spill.places[order]
        kind = groups.kind_of(scope)
        # Counted from the records: a root's histogram may count buckets (`sets.Manifest`).
        if kind and (record := groups.record(scope, Counter(map(encoding.record_score, records)))):
            ranklists.append(
                orders.order_id(board_slug, day_key, groups.ranklist_scope(kind)), record
            )

    written = _orders_sort_and_write(files, ranked, progress)
    written += _orders_sort_and_write(ranklists.files())
    lease.pending_clear(board_slug)
    return written


def _orders_sort_and_write(
    files: dict[str, Path],
    built_one: Callable[[str, list[bytes]], object] = lambda *_: None,
    progress: Progress = QUIET,
) -> int:
    """Each order of these files sorted and cut into sets, written a few MB at a time; `built_one`
    is told of each order built (its records, sorted)."""
    built: dict = {}
    size = 0
    for order, path in files.items():
        records = encoding.records_of(path.read_bytes())
        records.sort()
        built[order] = moving.sets_build(records, born=orders.order_born(order))
        built_one(order, records)
        size += sum(len(blob) for _v, blob in built[order][1].written.values())
        if size > WRITE_BYTES:
            order_writes.orders_write(built)
            built.clear()
            size = 0
        progress.advance()
    order_writes.orders_write(built)
    return len(files)


class _Spill:
    """Each entry's member records appended to its orders' scratch files, so memory holds only
    a little of each order whatever the size of the board."""

    def __init__(self, board_slug: str, oldest_day: int, today: int, scratch: Path) -> None:
        self.board_slug, self.oldest_day, self.today, self.scratch = (
            board_slug,
            oldest_day,
            today,
            scratch,
        )
        self.buffers: dict[str, bytearray] = defaultdict(bytearray)
        self.paths: dict[str, Path] = {}
        self.places: dict[str, tuple[str, str]] = {}  # order: (day, scope)
        self.scopes: set[str] = set()  # every group of the entries added

    def add(self, entry: dict) -> None:
        placed = entries.placement(entry)
        scopes = entries.scopes_of(placed)
        self.scopes.update(scopes[1:])
        days = entries.records_by_day(placed, entry["_id"], self.oldest_day, self.today)
        for day_key, record in days:
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

"""Many solves at once: the demo's data (`solves_import`) and a community's history
(`SolvesImport`, behind `import_solves`).

A bulk load logs its solves already applied, then every board is rebuilt in one pass over the log
(`boards_rebuild_all`): nothing counts them one by one, and the boards end as the solves counted
one by one would have left them. Each (programmer, problem) counts once, and an import is
idempotent by each line's id (`import_ids`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from django.utils import timezone
from pymongo.errors import BulkWriteError

from .. import leaderboard, mongo
from ..models import Problem, Programmer
from .rebuilds import boards_rebuild_all
from .solves import solve_check_time


def solves_import(*, solves: Iterable[tuple[Programmer, Problem, dt.datetime]]) -> int:
    """Log many accepted solves at once, then rebuild every board from the `solves` log.

    For bulk loads such as the demo data: one rebuild is a single pass over the log, far cheaper
    than one pipeline update per solve and board when thousands arrive together, and it leaves
    exactly the boards the solves would have left one by one. A repeated (programmer, problem)
    counts once. Returns how many solves were new.
    """
    documents = []
    for programmer, problem, solved_at in solves:
        solve_check_time(solved_at)
        # Marked applied: the rebuild below counts them, so nothing may apply them again.
        documents.append(
            {
                "programmer_id": programmer.pk,
                "problem": problem.slug,
                "points": problem.points,
                "solved_at": solved_at,
                "applied": True,
                "problem_counted": programmer.on_boards,  # so the recount marks none of them
            }
        )
    inserted = len(_inserted(mongo.solves(), documents))
    if inserted:
        boards_rebuild_all()
    return inserted


@contextlib.contextmanager
def solves_bulk_logging(*, progress: leaderboard.Progress = leaderboard.QUIET) -> Iterator[None]:
    """Around all the batches of an import: into an empty log (a new site) the solves are logged
    without the log's secondary indexes, made again at the end, even after an error (the unique
    key stays: it is what counts a solve once). Made once over the whole log, they cost the
    embedded server less than kept up a solve at a time (`docs/benchmarks.md`)."""
    solves = mongo.solves()
    aside = mongo.indexes_set_aside(solves) if solves.estimated_document_count() == 0 else []
    try:
        yield
    finally:
        if aside:
            progress.phase("the log's indexes")
            mongo.indexes_restore(solves, aside)


@dataclass(frozen=True)
class ImportedSolve:
    """One line of an import, validated like `POST /api/v1/solves`."""

    key: str  # the line's id, as an idempotency key
    body_hash: str
    handle: str
    problem_slug: str
    solved_at: dt.datetime
    points: int | None


@dataclass
class ImportReport:
    imported: int = 0
    present: int = 0
    reused: list[str] = field(default_factory=list)  # ids sent before with another body


class SolvesImport:
    """The batches of one import, logged in turn (`log`, then `finish`): idempotent by id (an id
    seen before is already present; with another body it is refused), unknown handles and
    problems registered, each (programmer, problem) counted once. Boards are not touched:
    `boards_rebuild_all` counts everything in one pass once the whole import is logged. Solves
    are history, so the late limit does not apply.

    Each batch is stored (its solves, then its ids) by a thread while the caller checks the next
    one's ids and registers its programmers: the storing is the server's work, the rest this
    process's, and one after the other each waited for the other. An id of the batch being
    stored is known as claimed before its record is written.

    Each id is recorded (`mongo.import_ids`) once its solve is logged: one write a line, where a
    claim and then its answer took two (`docs/benchmarks.md`). A run stopped between the two
    leaves solves without ids; the next run logs them again, which the unique (programmer,
    problem) key turns into "already present"."""

    def __init__(self) -> None:
        self._storing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-store")
        self._stored: Future | None = None
        self._in_flight: dict[str, str] = {}  # {id: body hash} of the batch being stored

    def log(self, solves: list[ImportedSolve]) -> ImportReport:
        """Check a batch and hand it to be stored. Returns the report of the batch stored before
        it (an empty one at first): a batch's report is known once it is stored."""
        report = ImportReport()
        fresh = _import_unclaimed(solves, report, self._in_flight)
        programmers = _programmers_registered([s.handle for s in fresh])
        problems = {p.slug: p for p in _problems_registered({s.problem_slug for s in fresh})}
        documents = [
            _imported_solve_document(
                solve, programmers[solve.handle.lower()], problems[solve.problem_slug]
            )
            for solve in fresh
        ]
        before = self._wait()
        self._in_flight = {s.key: s.body_hash for s in fresh}
        self._stored = self._storing.submit(_import_store, fresh, documents, report)
        return before

    def finish(self) -> ImportReport:
        """Wait for the last batch; returns its report."""
        try:
            return self._wait()
        finally:
            self._storing.shutdown()

    def _wait(self) -> ImportReport:
        if self._stored is None:
            return ImportReport()
        stored, self._stored = self._stored, None
        return stored.result()


def _import_store(
    fresh: list[ImportedSolve], documents: list[dict], report: ImportReport
) -> ImportReport:
    """Log a batch's new solves, then record their ids."""
    inserted = _inserted(mongo.solves(), documents)
    report.imported = len(inserted)
    report.present += len(fresh) - report.imported
    _import_ids_store(fresh, inserted)
    return report


def _imported_solve_document(
    solve: ImportedSolve, programmer: Programmer, problem: Problem
) -> dict:
    return {
        "programmer_id": programmer.pk,
        "problem": problem.slug,
        "points": problem.points if solve.points is None else solve.points,
        "solved_at": solve.solved_at,
        "applied": True,  # counted by the rebuild that follows the import
        "problem_counted": programmer.on_boards,  # as the recount after it would mark it
        "request": solve.key,
        "logged_at": timezone.now(),
    }


def _import_ids_store(solves: list[ImportedSolve], inserted: set[int]) -> None:
    """Record the ids of logged lines, with whether each counted. One that another import
    recorded meanwhile stays as it is."""
    now = timezone.now()
    ids = [
        {"_id": s.key, "body_hash": s.body_hash, "counted": i in inserted, "imported_at": now}
        for i, s in enumerate(solves)
    ]
    _inserted(mongo.import_ids(), ids)


def _inserted(collection, documents: list[dict]) -> set[int]:
    """Insert documents, skipping those a unique key refuses. Returns the indexes of new ones."""
    if not documents:
        return set()
    try:
        collection.insert_many(documents, ordered=False)
    except BulkWriteError as error:
        if any(e["code"] != mongo.DUPLICATE_KEY for e in error.details["writeErrors"]):
            raise
        return set(range(len(documents))) - {e["index"] for e in error.details["writeErrors"]}
    return set(range(len(documents)))


def _import_unclaimed(
    solves: list[ImportedSolve], report: ImportReport, in_flight: dict[str, str]
) -> list[ImportedSolve]:
    """The lines whose id is new (the first of a batch that repeats one); an id imported before,
    being stored (`in_flight`, {id: body hash}) or earlier in the batch, is already present (the
    same body) or refused (another body)."""
    keys = list({s.key for s in solves})
    claimed = {
        doc["_id"]: doc["body_hash"]
        for doc in mongo.find_by_ids(mongo.import_ids(), keys, {"body_hash": 1})
    }
    claimed |= {key: in_flight[key] for key in keys if key in in_flight}
    fresh = []
    for solve in solves:
        if solve.key not in claimed:
            claimed[solve.key] = solve.body_hash
            fresh.append(solve)
        elif claimed[solve.key] == solve.body_hash:
            report.present += 1
        else:
            report.reused.append(solve.key)
    return fresh


def _programmers_registered(handles: list[str]) -> dict[str, Programmer]:
    """{handle in lower case: programmer} for these handles, registering the unknown ones (the
    first spelling seen wins, as on the API)."""
    lowered: dict[str, str] = {}
    for handle in handles:
        lowered.setdefault(handle.lower(), handle)

    def found() -> dict[str, Programmer]:
        known = {}
        names = list(lowered)
        for start in range(0, len(names), 500):
            query = Programmer.objects.handles_in(names[start : start + 500])
            known |= {p.handle.lower(): p for p in query}
        return known

    known = found()
    missing = [Programmer(handle=lowered[h]) for h in lowered if h not in known]
    if not missing:
        return known
    Programmer.objects.bulk_create(missing, batch_size=500, ignore_conflicts=True)
    return found()


def _problems_registered(slugs: set[str]) -> list[Problem]:
    existing = set(Problem.objects.filter(slug__in=slugs).values_list("slug", flat=True))
    Problem.objects.bulk_create(
        [Problem(slug=s, title=s, published=False) for s in slugs - existing],
        batch_size=500,
        ignore_conflicts=True,
    )
    return list(Problem.objects.filter(slug__in=slugs))

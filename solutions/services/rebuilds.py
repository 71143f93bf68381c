"""Boards recomputed from the logs alone: a programmer's entry on a board (from their solves, or
on a best-score board from their scored reports), and whole boards rebuilt in one streamed pass
over the `solves` log: one board, several, or every board with the problems' solver counts.

A rebuild leaves exactly the boards the solves, counted one by one, would have left. Those off
the boards (hidden, banned) get no entry, and held solves count nowhere until released (`holds`).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings

from .. import holds, leaderboard, mongo, solvers
from ..clock import today
from ..live import boards_touch
from ..models import Board, Programmer


def entry_from_solves(
    board: Board, programmer: Programmer, solves: list[dict], now_day: int
) -> dict | None:
    """The entry a board should hold for a programmer, computed from their solves alone."""
    return leaderboard.entry_from_solves(
        board.spec,
        board.value_of,
        programmer_identity(programmer),
        solves,
        now_day,
        settings.LEADERBOARD_TIME_ZONE,
    )


def board_entry(
    board: Board,
    who: leaderboard.Identity,
    solves: list[dict],
    scores: list[dict],
    now_day: int,
    time_zone: str,
) -> tuple[dict | None, list[str]]:
    """A board's entry for a programmer from their solves, or on a best-score board from their
    scored reports of the problems it takes (None: off the board), with the ids it counts."""
    if board.is_best:
        counted = [s for s in scores if board.counts_problem(s["problem"])]
        reports = [
            leaderboard.Report(
                s["problem"],
                leaderboard.epoch_day(s["solved_at"], time_zone),
                board.value_of_score(s["score"]),
                s["solved_at"],
            )
            for s in counted
        ]
        document = leaderboard.entry_from_reports(board.spec, who, reports, now_day)
    else:
        counted = solves
        document = leaderboard.entry_from_solves(
            board.spec, board.value_of, who, solves, now_day, time_zone
        )
    return document, [str(s["_id"]) for s in counted]


def programmer_identity(programmer: Programmer) -> leaderboard.Identity:
    """Who a programmer's entries belong to, as the boards show them."""
    return leaderboard.Identity(programmer.pk, programmer.handle, tuple(programmer.group_scopes()))


def board_windows(boards: Iterable[Board]) -> dict[str, leaderboard.Window]:
    """{board slug: its window}: what the engine needs to keep each board's days (`day_change`)."""
    return {board.slug: board.spec for board in boards}


def board_rebuild(*, board: Board, dry_run: bool = False) -> leaderboard.RebuildReport:
    """Recompute a board's entries and orders from the `solves` log, streamed."""
    return boards_rebuild(boards=[board], dry_run=dry_run)[0]


def boards_rebuild(
    *,
    boards: list[Board],
    dry_run: bool = False,
    progress: leaderboard.Progress = leaderboard.QUIET,
    stats: solvers.StatsBuild | None = None,
) -> list[leaderboard.RebuildReport]:
    """Recompute these boards' entries and orders from the `solves` log, streamed once for all
    of them and for the problems' counts if `stats` is given (`progress` is told of each solve
    read, then of each order written)."""
    now_day, time_zone = today(), settings.LEADERBOARD_TIME_ZONE
    builds = [leaderboard.BoardBuild(board.slug, board.spec, now_day, dry_run) for board in boards]
    progress.phase("entries", mongo.solves().estimated_document_count(), "solves")
    with_scores = any(board.is_best for board in boards)
    for programmer, logged, scored in _log_by_programmer(with_scores):
        shown = [solve for solve in logged if not holds.is_held(solve)]
        if stats is not None:
            stats.add(shown, counted=programmer.on_boards)
            if len(shown) < len(logged):  # held solves are in no count until released
                stats.add([s for s in logged if holds.is_held(s)], counted=False)
        # None for those off the boards (hidden, banned): a rebuild removes their entries.
        solves = shown if programmer.on_boards else []
        scores = [r for r in scored if not holds.is_held(r)] if programmer.on_boards else []
        who = programmer_identity(programmer)
        for board, build in zip(boards, builds, strict=True):
            entry, ids = board_entry(board, who, solves, scores, now_day, time_zone)
            if entry is None:
                build.absent(programmer.pk)
            else:
                build.add(entry, ids)
        progress.advance(len(logged))
    reports = [build.finish(progress) for build in builds]
    if not dry_run:
        boards_touch([board.slug for board in boards])
    return reports


def boards_rebuild_all(
    *, progress: leaderboard.Progress = leaderboard.QUIET
) -> list[leaderboard.RebuildReport]:
    """Rebuild every board and the problems' solver counts from the `solves` log (after a bulk
    load, or a restore), in one pass over it."""
    stats = solvers.StatsBuild()
    reports = boards_rebuild(boards=list(Board.objects.all()), progress=progress, stats=stats)
    progress.phase("problems' solver counts")
    stats.finish()
    return reports


def _log_by_programmer(
    with_scores: bool = False,
) -> Iterator[tuple[Programmer, list[dict], list[dict]]]:
    """Every programmer in id order with all their solves in the log, those off the boards
    (hidden, banned) too: the problems' counts mark each solve counted or not; and their
    scored reports if `with_scores` (for best-score boards), else none.

    Read a range of programmer ids at a time: the embedded server reads the whole of a sorted
    read before its first answer (past the socket timeout on a large log; `docs/benchmarks.md`),
    and a range is one walk of the unique key's index. The next range is read by a thread while
    the caller computes with this one."""
    programmers = Programmer.objects.order_by("pk").iterator(chunk_size=leaderboard.REBUILD_BATCH)
    chunks = iter(lambda: list(itertools.islice(programmers, leaderboard.REBUILD_BATCH)), [])
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="log-read") as reader:
        coming = None
        for chunk in chunks:
            read, coming = coming, reader.submit(_log_range, chunk, with_scores)
            if read is not None:
                yield from read.result()
        if coming is not None:
            yield from coming.result()


def _log_range(
    chunk: list[Programmer], with_scores: bool
) -> list[tuple[Programmer, list[dict], list[dict]]]:
    """These programmers (in id order), each with their solves. Grouped here, not sorted by
    the server: an entry does not depend on the order of its solves, and the embedded server's
    sort costs more than the grouping. Whole solves, not a projection of them: the embedded
    server copies each document it projects (`docs/benchmarks.md`)."""
    by_programmer: dict[int, list[dict]] = defaultdict(list)
    for solve in mongo.solves().find(
        {"programmer_id": {"$gte": chunk[0].pk, "$lte": chunk[-1].pk}}
    ):
        by_programmer[solve["programmer_id"]].append(solve)
    scores: dict[int, list[dict]] = defaultdict(list)
    if with_scores:
        between = {"programmer_id": {"$gte": chunk[0].pk, "$lte": chunk[-1].pk}}
        for report in mongo.scores().find(between):
            scores[report["programmer_id"]].append(report)
    return [(p, by_programmer.get(p.pk, []), scores.get(p.pk, [])) for p in chunk]

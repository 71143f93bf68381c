"""Import a community's history of solves from JSON Lines.

Why it exists: a community moving here brings years of solves, and posting them one by one
through the API would take days. Each line is one object with exactly the fields of
`POST /api/v1/solves` (`id`, `programmer`, `problem`, `solved_at`, optional `points`), checked
the way the API checks them; a bad line is reported with its number and skipped. Unknown handles
and problems are registered. The import is idempotent by `id` (running it twice changes nothing)
and ignores the late-solve limit, since history is old by nature. Solves are logged in batches and
the boards are then built in bulk from the log, one streaming pass for every board (the same
build as `rebuild_boards`), so a million solves take minutes. While a batch is logged the next one
is read and checked.

On a terminal a progress bar shows each step with its count and rate: reading and logging the
lines, the boards' entries (the log read once for all of them), each board's orders and the
problems' solver counts; nothing is shown when the output is a file or a pipe. `-v 2` ends with
how long each step took. `tools/history_file.py` writes a made-up history of any size to try it.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from django.core.management.base import BaseCommand, CommandError, CommandParser
from pydantic import ValidationError
from tqdm import tqdm

from solutions import idempotency, leaderboard, mongo, services
from solutions.api.parser import refuse_constant
from solutions.api.schemas.reports import SolveRequest

BATCH = 5_000


def parsed(line: str) -> services.ImportedSolve:
    """One line as an imported solve; raises ValueError with the reason."""
    try:
        body = json.loads(line, parse_constant=refuse_constant)
    except (ValueError, RecursionError) as error:
        raise ValueError("not valid JSON") from error
    try:
        solve = SolveRequest.model_validate(body)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the line"
        raise ValueError(f"{where}: {first['msg']}") from error
    try:
        services.solve_check_future(solve.solved_at)
    except services.SolveRejected as error:
        raise ValueError(f"solved_at: {error}") from error
    return services.ImportedSolve(
        key=f"import:{solve.id}",
        body_hash=idempotency.fingerprint(body),
        handle=solve.programmer,
        problem_slug=solve.problem,
        solved_at=solve.solved_at,
        points=solve.points,
    )


@dataclass
class Tally:
    """The lines of an import so far."""

    imported: int = 0
    present: int = 0  # imported before, with the same body
    rejected: int = 0  # bad lines, and ids used before with another body

    @property
    def lines(self) -> int:
        return self.imported + self.present + self.rejected


class Command(BaseCommand):
    help = "Import solves from a JSON Lines file (the fields of POST /api/v1/solves)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="The JSON Lines file ('-' for standard input).")

    def handle(self, *args, path: str, verbosity: int, **options) -> None:
        mongo.patient_commands()  # a bulk load's command can take the server a while
        steps = Steps(shown=self.stdout.isatty())
        tally = Tally()
        with self._opened(path) as lines, services.solves_bulk_logging(progress=steps):
            steps.phase("lines", _size_of(lines), "B")
            importing = services.SolvesImport()
            for batch, bad, size in _read_ahead(_batches(lines)):
                for number, reason in bad:
                    steps.write(self.stderr, f"line {number}: {reason}")
                tally.rejected += len(bad)
                self._count(steps, tally, importing.log(batch))  # the batch before's, stored
                steps.advance(size, lines=tally.lines)
            self._count(steps, tally, importing.finish())
            steps.advance(0, lines=tally.lines)
        if tally.imported:
            services.boards_rebuild_all(progress=steps)
        steps.close()
        self.stdout.write(
            self.style.SUCCESS(
                f"imported {tally.imported}, already present {tally.present}, "
                f"rejected {tally.rejected}"
            )
        )
        if verbosity >= 2:
            for name, seconds, count, unit in steps.times:
                done = f" ({count:,} {unit}, {count / max(seconds, 0.1):,.0f}/s)" if unit else ""
                self.stdout.write(f"  {name}: {seconds:.1f} s{done}")

    def _count(self, steps: Steps, tally: Tally, report: services.ImportReport) -> None:
        """Add a stored batch's report to the tally, reporting the ids it refused (used before
        with another body)."""
        tally.imported += report.imported
        tally.present += report.present
        tally.rejected += len(report.reused)
        for key in report.reused:
            steps.write(self.stderr, f"id {key.split(':', 1)[1]}: used before with another body")

    @contextlib.contextmanager
    def _opened(self, path: str) -> Iterator[BinaryIO]:
        if path == "-":
            yield sys.stdin.buffer
            return
        try:
            file = Path(path).open("rb")
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error.strerror}.") from error
        with file:
            yield file


def _size_of(file: BinaryIO) -> int | None:
    """The file's size in bytes, None for a pipe or a terminal."""
    with contextlib.suppress(OSError, ValueError):
        status = os.fstat(file.fileno())
        if stat.S_ISREG(status.st_mode):
            return status.st_size
    return None


def _batches(lines: Iterable[bytes]) -> Iterator[tuple[list, list, int]]:
    """Batches of valid lines, with the (line number, reason) of the bad ones among them and
    how many bytes the batch took."""
    batch, bad, size = [], [], 0
    for number, raw in enumerate(lines, start=1):
        size += len(raw)
        line = raw.decode("utf-8", errors="replace")
        if not line.strip():
            continue
        try:
            batch.append(parsed(line))
        except ValueError as error:
            bad.append((number, str(error)))
        if len(batch) + len(bad) >= BATCH:
            yield batch, bad, size
            batch, bad, size = [], [], 0
    yield batch, bad, size


def _read_ahead(batches: Iterator) -> Iterator:
    """The batches, each next one read and checked by a thread while the caller stores the one
    it has (the reading is Python's work, the storing mostly the database's)."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="read-ahead") as reader:
        coming = reader.submit(next, batches, None)
        while (batch := coming.result()) is not None:
            coming = reader.submit(next, batches, None)
            yield batch


class Steps(leaderboard.Progress):
    """The import's steps as they go: a progress bar each on a terminal (tqdm), nothing
    otherwise; how long each took is kept either way."""

    def __init__(self, *, shown: bool) -> None:
        self.shown = shown
        self.times: list[tuple[str, float, int, str]] = []  # (step, seconds, count, unit)
        self._bar: tqdm | None = None

    def phase(self, name: str, total: int | None = None, unit: str = "") -> None:
        self.close()
        self._name, self._unit = name, unit
        self._started, self._count, self._lines = time.monotonic(), 0, None
        self._bar = tqdm(
            total=total,
            desc=name,
            unit=unit if unit == "B" else f" {unit}",
            unit_scale=unit in ("B", "solves"),  # 3.00M solves; but 67 orders, not 67.0
            # A step without a count (an index being built) shows how long it has taken.
            bar_format=None if unit else "{desc}: {elapsed}",
            file=sys.stdout,
            disable=not self.shown,
            dynamic_ncols=True,
        )

    def advance(self, count: int = 1, *, lines: int | None = None) -> None:
        self._count += count
        self._lines = lines if lines is not None else self._lines
        if self._bar is not None and self.shown:
            if lines is not None:
                self._bar.set_postfix_str(f"{lines:,} lines", refresh=False)
            self._bar.update(count)

    def write(self, stream, message: str) -> None:
        """A message on `stream` (a Django OutputWrapper) that leaves the bar whole."""
        with tqdm.external_write_mode(file=sys.stdout) if self.shown else contextlib.nullcontext():
            stream.write(message)

    def close(self) -> None:
        if self._bar is None:
            return
        self._bar.close()
        count, unit = (self._count, self._unit) if self._lines is None else (self._lines, "lines")
        self.times.append((self._name, time.monotonic() - self._started, count, unit))
        self._bar = None

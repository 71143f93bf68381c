"""Import a community's history of solves from JSON Lines.

Why it exists: a community moving here brings years of solves, and posting them one by one
through the API would take days. Each line is one object with exactly the fields of
`POST /api/v1/solves` (`id`, `programmer`, `problem`, `solved_at`, optional `points`), checked
the way the API checks them; a bad line is reported with its number and skipped. Unknown handles
and problems are registered. The import is idempotent by `id` (running it twice changes nothing)
and ignores the late-solve limit, since history is old by nature. Solves are logged in batches and
the boards are then built in bulk from the log, one streaming pass per board (the same build as
`rebuild_boards`), so a million solves take minutes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from pydantic import ValidationError

from solutions import idempotency, services
from solutions.api.parser import refuse_constant
from solutions.api.schemas import SolveRequest

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


class Command(BaseCommand):
    help = "Import solves from a JSON Lines file (the fields of POST /api/v1/solves)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="The JSON Lines file ('-' for standard input).")

    def handle(self, *args, path: str, **options) -> None:
        imported = present = rejected = 0
        for batch, bad in self._batches(path):
            for number, reason in bad:
                self.stderr.write(f"line {number}: {reason}")
            rejected += len(bad)
            report = services.solves_import_batch(solves=batch)
            imported, present = imported + report.imported, present + report.present
            for key in report.reused:
                self.stderr.write(f"id {key.split(':', 1)[1]}: used before with another body")
            rejected += len(report.reused)
            self._progress(imported + present + rejected)
        if imported:
            self._progress(imported + present + rejected, "building the boards")
            services.boards_rebuild_all()
        if self.stdout.isatty():
            self.stdout.write("")
        self.stdout.write(
            self.style.SUCCESS(
                f"imported {imported}, already present {present}, rejected {rejected}"
            )
        )

    def _batches(self, path: str) -> Iterator[tuple[list, list]]:
        """Batches of valid lines, with the (line number, reason) of the bad ones among them."""
        try:
            lines = (
                sys.stdin if path == "-" else Path(path).open(encoding="utf-8", errors="replace")
            )
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error.strerror}.") from error
        with lines:
            batch, bad = [], []
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    batch.append(parsed(line))
                except ValueError as error:
                    bad.append((number, str(error)))
                if len(batch) + len(bad) >= BATCH:
                    yield batch, bad
                    batch, bad = [], []
            yield batch, bad

    def _progress(self, lines: int, doing: str = "") -> None:
        """A progress line on a terminal (nothing when the output is a file or a pipe)."""
        if self.stdout.isatty():
            self.stdout.write(f"\r{lines:,} lines read {doing}".ljust(60), ending="")
            self.stdout.flush()

"""Recompute leaderboard entries and orders (listing order and rank data of every board day)
from the `solves` log.

Why it exists: every board is derived from `solves`, the log of first accepted solves, and the
incremental updates only ever add to it. When the derived data is wrong or missing (restored
from a partial backup, a board's window or metric changed in the admin, a bug fixed in the
incremental path, a rank that disagrees with a count) a rebuild reproduces every board exactly.
`--dry-run` reports what would change and writes nothing.
"""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from solutions import mongo, services
from solutions.models import Board


class Command(BaseCommand):
    help = "Recompute board entries and orders from the solves log."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--board", metavar="SLUG", help="Only this board (default: all).")
        parser.add_argument(
            "--dry-run", action="store_true", help="Report what would change; write nothing."
        )

    def handle(self, *args, board: str | None, dry_run: bool, **options) -> None:
        boards = list(Board.objects.all() if board is None else Board.objects.filter(slug=board))
        if not boards:
            raise CommandError(f"There is no board {board!r}." if board else "There are no boards.")
        if not dry_run:
            # A board added in the admin may not have its collection's indexes yet.
            mongo.ensure_indexes([b.slug for b in boards])
        for each in boards:
            report = services.board_rebuild(board=each, dry_run=dry_run)
            if dry_run:
                changes = f"{report.changed} to rewrite, {report.removed} to remove"
            else:
                changes = f"{report.changed} rewritten, {report.removed} removed"
            line = f"{each.slug}: {report.entries} entries ({changes}), {report.orders} orders"
            healthy = report.changed == 0 and report.removed == 0
            self.stdout.write(self.style.SUCCESS(line) if healthy else self.style.WARNING(line))
        if dry_run:
            self.stdout.write(self.style.NOTICE("Dry run: nothing was written."))
        else:
            self.stdout.write(self.style.SUCCESS(f"Rebuilt {len(boards)} board(s)."))

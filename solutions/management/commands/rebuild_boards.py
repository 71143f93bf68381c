"""Recompute leaderboard entries and orders (listing order and rank data of every board day)
from the `solves` log, or check that the orders agree with the entries.

Why it exists: every board is derived from `solves`, the log of first accepted solves, and the
incremental updates only ever add to it. When the derived data is wrong or missing (restored
from a partial backup, a board's window or metric changed in the admin, a bug fixed in the
incremental path, a rank that disagrees with a count) a rebuild reproduces every board exactly.
Rebuilding every board recounts the problems' solvers too, in the same pass over the log.
`--dry-run` reports what would change and writes nothing.

`--verify` rebuilds nothing: it compares every order that requests read (each board day kept,
everybody and each group) with the seed's sorted per-day query over the entries
(`leaderboard.board_verify`), lists every difference, and fails when there is one, so a
deploy or a cron job can tell that the orders need a rebuild. It reads whole boards: run it off
peak. On real MongoDB it builds the wildcard index its query reads (``keys.$**``) on each board
it checks, and drops it after the check: kept, the index would cost every solve (see
`leaderboard.seed_query_indexes`).
"""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from solutions import leaderboard, mongo, services
from solutions.models import Board

SHOWN = 20  # differences listed per board; the count says how many more


class Command(BaseCommand):
    help = "Recompute board entries and orders from the solves log, or --verify them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--board", metavar="SLUG", help="Only this board (default: all).")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument(
            "--dry-run", action="store_true", help="Report what would change; write nothing."
        )
        mode.add_argument(
            "--verify",
            action="store_true",
            help="Rebuild nothing: compare every order with the entries; fail on a difference.",
        )

    def handle(self, *args, board: str | None, dry_run: bool, verify: bool, **options) -> None:
        # Both read whole boards (a board's ids, a day sorted by the query) in one read each,
        # which the embedded server answers only once it has read all of it: a million entries
        # take it longer than a request's socket timeout.
        mongo.patient_commands()
        boards = list(Board.objects.all() if board is None else Board.objects.filter(slug=board))
        if not boards:
            raise CommandError(f"There is no board {board!r}." if board else "There are no boards.")
        if verify:
            self.verify_boards(boards)
        else:
            self.rebuild_boards(boards, dry_run, every=board is None)

    def rebuild_boards(self, boards: list[Board], dry_run: bool, every: bool) -> None:
        if not dry_run:
            # A board added in the admin may not have its collection's indexes yet.
            mongo.ensure_indexes([b.slug for b in boards])
        # One pass over the log for every board (`services.boards_rebuild`).
        if every and not dry_run:
            reports = services.boards_rebuild_all()  # and the problems' counts
        else:
            reports = services.boards_rebuild(boards=boards, dry_run=dry_run)
        for each, report in zip(boards, reports, strict=True):
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

    def verify_boards(self, boards: list[Board]) -> None:
        wildcards = leaderboard.seed_query_indexes([b.slug for b in boards])
        with mongo.indexes_for_a_while(wildcards) as built:
            if built:
                self.stdout.write(f"Built for the check, dropped after it: {', '.join(built)}.")
            elif not mongo.server_uses_wildcard_indexes():
                self.stdout.write("This server reads no wildcard index: each day is a scan.")
            differing = self.boards_compared(boards)
        if differing:
            raise CommandError(
                f"{differing} of {len(boards)} board(s) differ from their entries: "
                "`manage.py rebuild_boards` rebuilds them from the solves log."
            )
        self.stdout.write(self.style.SUCCESS(f"Every order of {len(boards)} board(s) agrees."))

    def boards_compared(self, boards: list[Board]) -> int:
        """Compare each board's orders with its entries, listing the differences; returns how
        many boards differ."""
        differing = 0
        for each in boards:
            report = leaderboard.board_verify(each.slug)
            compared = f"{len(report.compared)} orders, {report.members} members"
            if report.agrees:
                self.stdout.write(self.style.SUCCESS(f"{each.slug}: {compared} agree."))
                continue
            differing += 1
            count = len(report.differences)
            self.stdout.write(
                self.style.WARNING(f"{each.slug}: {count} difference(s) in {compared}:")
            )
            for difference in report.differences[:SHOWN]:
                self.stdout.write(self.style.ERROR(f"  {difference}"))
            if count > SHOWN:
                self.stdout.write(self.style.ERROR(f"  ... and {count - SHOWN} more"))
        return differing

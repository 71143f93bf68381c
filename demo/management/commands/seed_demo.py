"""Fill a new site with demo data, so a newcomer's first `make run` shows a living site.

Problems with answers, a few hundred programmers from several countries and organizations, a
month of their solves (busier towards today, so the 7-day board moves) with the rank history it
would have left, a running competition, and the staff user `demo`, whose password is printed:
it can answer problems and use the admin. `make run` calls it with --if-empty on every start;
`make reset` calls it with --reset to start the demo over with a new password. Both keep the
password in --password-file, for every later start to print it (demo/login.py).
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from demo import login, services
from solutions.models import Problem

RESET_WARNING = (
    "This deletes every programmer (and their login), problem and competition, and all the "
    "MongoDB data of the site, then seeds the demo again."
)


class Command(BaseCommand):
    help = "Create demo problems, programmers, solves and history (--if-empty: only on a new site)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--if-empty", action="store_true", help="Do nothing when problems exist already."
        )
        parser.add_argument(
            "--reset",
            action="store_true",
            help="Development only (DEBUG): wipe the site's data first, then seed it again.",
        )
        parser.add_argument(
            "--no-input", action="store_false", dest="interactive", help="Do not ask first."
        )
        parser.add_argument("--programmers", type=int, default=300, help="How many (300).")
        parser.add_argument("--seed", type=int, default=2020, help="Random seed.")
        parser.add_argument(
            "--password-file",
            type=Path,
            help="Development only (DEBUG): keep a new demo password in this file (bin/run).",
        )

    def handle(
        self,
        *args,
        if_empty: bool,
        reset: bool,
        interactive: bool,
        password_file: Path | None,
        **options,
    ) -> None:
        if password_file is not None:
            login.password_file_check()
        if reset:
            self.wipe(interactive)
        elif if_empty and Problem.objects.exists():
            self.stdout.write("Problems exist already: no demo data added.")
            if password_file is None:  # with one, `demo_login` prints the login at the end
                self.stdout.write(self.login_reminder())
            return
        report = services.demo_seed(programmers=options["programmers"], seed=options["seed"])
        self.stdout.write(
            self.style.SUCCESS(
                f"{report.problems} problems, {report.programmers} programmers, "
                f"{report.solves} solves, {report.history_days} days of rank history."
            )
        )
        self.stdout.write(f"Competition running: /competitions/{report.competition}/")
        if report.password:
            if password_file is not None:
                login.password_file_write(password_file, report.password)
            self.stdout.write(login.login_line(report.password))
        else:
            self.stdout.write(self.login_reminder())

    def wipe(self, interactive: bool) -> None:
        if not settings.DEBUG:
            raise CommandError("--reset is for development: it needs DEBUG=true.")
        if interactive:
            answer = input(f"{RESET_WARNING}\nType 'yes' to go on: ")
            if answer.strip().lower() != "yes":
                raise CommandError("Reset cancelled.")
        services.demo_wipe()
        self.stdout.write("The site's data is wiped.")

    def login_reminder(self) -> str:
        return (
            f"Demo staff login: {services.DEMO_USERNAME} (its password was printed when it was "
            "made; `make demo-password` gives it a new one, `make reset` starts the demo over)."
        )

"""Print the demo login, last, on every start of the development site: bin/web runs it in the
background with --when-serving, so the line comes once Django's server accepts connections,
after the start-up lines instead of among them. The password is read from the file `seed_demo`
and `demo_password` keep (the database has only its hash) and checked before it is printed.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from demo import login

SERVER_START_SECONDS = 300  # the server's system checks on a busy machine, with room to spare


class Command(BaseCommand):
    help = "Print the demo staff login (its password from --password-file)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--password-file", type=Path, required=True)
        parser.add_argument(
            "--when-serving",
            type=int,
            metavar="PORT",
            help="First wait until a server accepts connections on this port of 127.0.0.1.",
        )

    def handle(self, *args, password_file: Path, when_serving: int | None, **options) -> None:
        banner = login.login_banner(password_file=password_file)  # meanwhile the server starts
        if not banner:
            return
        if when_serving and not login.port_wait(when_serving, seconds=SERVER_START_SECONDS):
            return  # the server never came up: its own errors say why
        rule = "=" * len(banner)
        self.stdout.write(f"{rule}\n{self.style.SUCCESS(banner)}\n{rule}")

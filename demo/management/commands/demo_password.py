"""Give the demo user a new password and print it, for a developer who lost it: the database
keeps only its hash. Nothing else changes (`make reset` would start the whole demo over). A
lockout left by failed logins is lifted too. Development only (DEBUG on), like the demo itself.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from demo import login, services


class Command(BaseCommand):
    help = "Give the demo user a new password and print it (development: DEBUG=true)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--password-file",
            type=Path,
            help="Keep the password in this file too, for `make run` to print (bin/run).",
        )

    def handle(self, *args, password_file: Path | None, **options) -> None:
        if not settings.DEBUG:
            raise CommandError("demo_password is for development: it needs DEBUG=true.")
        try:
            password = services.demo_password_set()
        except User.DoesNotExist:
            raise CommandError(
                f"There is no user {services.DEMO_USERNAME!r}: `make reset` seeds the demo."
            ) from None
        if password_file is not None:
            login.password_file_write(password_file, password)
        self.stdout.write(self.style.SUCCESS(login.login_line(password)))

"""Make a service token for a judge or game server to post solves to the API.

Exists so that a token can be made from a deploy script or a shell without the admin. The token
is printed once, on the last line (so a script can take it with `tail -n 1`), and only its hash
is stored.
"""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from solutions import tokens


class Command(BaseCommand):
    help = "Create a service token for POST /api/v1/solves; prints it once, on the last line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="Who will use it, e.g. the judge's host name.")

    def handle(self, *args, name: str, **options) -> None:
        name = name.strip()
        if not name or len(name) > 100:
            raise CommandError("Give a name of 1 to 100 characters.")
        service_token, token = tokens.service_token_create(name=name)
        self.stdout.write(
            self.style.SUCCESS(f"Service token {service_token.pk} “{name}” created.")
            + " Copy it now: it is not stored and will not be shown again."
        )
        self.stdout.write(token)

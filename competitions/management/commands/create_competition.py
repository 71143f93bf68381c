"""Create a competition from the shell, for staff who script contests or have no admin at hand.

    python manage.py create_competition --slug S --title T --start ISO --end ISO \
        --problems a,b,c [--freeze ISO] [--registration-required] [--dry-run]

Times are ISO 8601 with an offset (2024-05-01T15:00:00+06:00). The problems are lettered A, B, C
in the order given and must exist already.
"""

from __future__ import annotations

import datetime as dt

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from competitions import services
from solutions.models import Problem


def parse_moment(value: str, option: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError as error:
        raise CommandError(f"{option}: {value!r} is not an ISO 8601 date and time.") from error
    if moment.tzinfo is None:
        raise CommandError(f"{option}: {value!r} needs a UTC offset, e.g. +00:00 or Z.")
    return moment


class Command(BaseCommand):
    help = "Create a competition with its problems (lettered A, B, C... in the order given)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--slug", required=True)
        parser.add_argument("--title", required=True)
        parser.add_argument("--start", required=True, help="ISO 8601 with offset")
        parser.add_argument("--end", required=True, help="ISO 8601 with offset")
        parser.add_argument("--problems", required=True, help="problem slugs, comma-separated")
        parser.add_argument("--freeze", help="ISO 8601 with offset: the standings freeze then")
        parser.add_argument("--registration-required", action="store_true")
        parser.add_argument("--dry-run", action="store_true", help="check everything, save nothing")

    def handle(self, *args, **options) -> None:
        start = parse_moment(options["start"], "--start")
        end = parse_moment(options["end"], "--end")
        freeze = parse_moment(options["freeze"], "--freeze") if options["freeze"] else None
        slugs = [slug.strip() for slug in options["problems"].split(",") if slug.strip()]
        if not slugs:
            raise CommandError("--problems: give at least one problem slug.")
        found = Problem.objects.in_bulk(slugs, field_name="slug")
        unknown = [slug for slug in slugs if slug not in found]
        if unknown:
            raise CommandError(f"Unknown problems: {', '.join(unknown)}.")
        try:
            with transaction.atomic():
                competition = services.competition_create(
                    slug=options["slug"],
                    title=options["title"],
                    start=start,
                    end=end,
                    problems=[found[slug] for slug in slugs],
                    freeze_at=freeze,
                    registration_required=options["registration_required"],
                )
                if options["dry_run"]:
                    transaction.set_rollback(True)
        except ValidationError as error:
            raise CommandError(_messages(error)) from error
        verb = "Would create" if options["dry_run"] else "Created"
        self.stdout.write(
            self.style.SUCCESS(
                f"{verb} {competition.slug} with {len(slugs)} problems: "
                f"/competitions/{competition.slug}/"
            )
        )


def _messages(error: ValidationError) -> str:
    if hasattr(error, "message_dict"):
        return " ".join(
            f"{field}: {' '.join(messages)}" for field, messages in error.message_dict.items()
        )
    return " ".join(error.messages)

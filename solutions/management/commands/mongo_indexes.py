"""Apply every MongoDB index (idempotent). The run command calls it at start-up; run it after
adding a board, or on a fresh production database."""

from django.core.management.base import BaseCommand

from activity import mongo as activity_mongo
from solutions import mongo
from solutions.models import Board


class Command(BaseCommand):
    help = "Create the MongoDB indexes of every collection and board (safe to run again)."

    def handle(self, *args, **options) -> None:
        names = mongo.ensure_indexes(list(Board.objects.values_list("slug", flat=True)))
        names += activity_mongo.ensure_indexes()
        self.stdout.write(self.style.SUCCESS(f"{len(names)} indexes in place."))

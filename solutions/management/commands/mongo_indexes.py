"""Apply every MongoDB index (idempotent): each app's declarations, registered with
`solutions.mongo.indexes_declare`, and every board's entries. Processes create the indexes
correctness rests on by themselves before their first use of the database; this command builds
the rest (the ones that speed reads up and may take long on a big collection). Run it after
deploying and after adding a board."""

from django.core.management.base import BaseCommand

from solutions import mongo


class Command(BaseCommand):
    help = "Create the MongoDB indexes of every collection and board (safe to run again)."

    def handle(self, *args, **options) -> None:
        names = mongo.indexes_ensure()
        self.stdout.write(self.style.SUCCESS(f"{len(names)} indexes in place."))

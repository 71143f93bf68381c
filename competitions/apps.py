from django.apps import AppConfig


class CompetitionsConfig(AppConfig):
    name = "competitions"
    verbose_name = "Competitions"

    def ready(self) -> None:
        # Its indexes join the one registry that `mongo_indexes` walks (solutions/mongo.py).
        from . import mongo

        mongo.register()

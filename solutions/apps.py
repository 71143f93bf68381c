from django.apps import AppConfig


class SolutionsConfig(AppConfig):
    name = "solutions"
    verbose_name = "Problems and leaderboards"

    def ready(self) -> None:
        from . import mongo
        from .leaderboard import store

        mongo.indexes_declare(mongo.fixed_indexes)
        # The boards' entries: listed from SQL, so applied by the command, not at first use.
        mongo.indexes_declare(store.board_indexes, at_first_use=False)

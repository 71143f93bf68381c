from django.apps import AppConfig


class SolutionsConfig(AppConfig):
    name = "solutions"
    verbose_name = "Problems and leaderboards"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from . import (
            checks,  # noqa: F401  (importing it registers the system checks)
            mongo,
            selectors,
        )
        from .models import Board

        mongo.indexes_declare(mongo.fixed_indexes)
        # Pages keep the visible boards in the cache; an edit in the admin drops them.
        post_save.connect(selectors.boards_forget, sender=Board)
        post_delete.connect(selectors.boards_forget, sender=Board)

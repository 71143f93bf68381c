from django.apps import AppConfig


class ActivityConfig(AppConfig):
    name = "activity"
    verbose_name = "Live boards, rank history and alerts"

    def ready(self) -> None:
        # Activity adds its parts to the pages of `solutions` and its collections' indexes to
        # the one registry, without `solutions` importing it (see solutions/extensions.py).
        from . import mongo, pages

        pages.register()
        mongo.register()

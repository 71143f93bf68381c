from django.apps import AppConfig


class CompetitionsConfig(AppConfig):
    name = "competitions"
    verbose_name = "Competitions"

    def ready(self) -> None:
        # Its indexes join the one registry that `mongo_indexes` walks (solutions/mongo/indexes.py).
        from django.db.models.signals import post_save

        from solutions import extensions
        from solutions.models import Programmer

        from . import mongo, selectors, services

        mongo.register()
        # A frozen competition's problems hold their solves off the public pages until the end.
        extensions.solve_holds(selectors.competition_solve_holds)
        # A hidden or banned programmer leaves the cached public standings at once.
        post_save.connect(
            services.standings_touch_running, sender=Programmer, dispatch_uid="standings-touch"
        )

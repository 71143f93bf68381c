from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "integrations"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        # The apps below send signals when a competition is archived and when a programmer who
        # shares their rank drops drops; webhooks turn them into deliveries (never an HTTP call
        # in the sender: a Celery task sends them).
        from activity.signals import rank_drop_shared
        from competitions.signals import competition_archived

        from . import services

        competition_archived.connect(services.on_competition_archived, dispatch_uid="webhooks")
        rank_drop_shared.connect(services.on_rank_drop_shared, dispatch_uid="webhooks")

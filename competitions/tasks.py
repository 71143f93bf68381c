"""Background work for competitions (Celery tasks are interfaces: they call a service)."""

from celery import shared_task

from . import services


@shared_task
def archive_finished_competitions_task() -> int:
    """Archive the final standings of every competition that has ended (nothing else does: a
    view never writes), and count the solves their freezes held (beat runs it every minute)."""
    return services.competitions_archive_finished()

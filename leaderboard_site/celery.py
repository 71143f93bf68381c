"""The Celery app: one per process, configured from Django settings (CELERY_* names)."""

import os

from celery import Celery
from kombu.transport import TRANSPORT_ALIASES

# A mongodb:// broker gets kombu's transport with a wait for messages that ends when the worker
# is told to stop (broker.py), so a warm shutdown fits in honcho's 5 s after Ctrl-C. By URL
# scheme, not a CELERY_BROKER_TRANSPORT setting: that would stay when the broker URL is another.
TRANSPORT_ALIASES["mongodb"] = "leaderboard_site.broker:Transport"

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard_site.settings")

app = Celery("leaderboard_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

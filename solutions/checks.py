"""System checks of the site's own requirements (Django's `check`; `--deploy` for production).

- **A shared cache in production.** The rate limits (`limits`) count in Django's cache. With a
  cache in each process's memory (no REDIS_URL), each gunicorn worker counts by itself: the
  limits multiply by the number of workers, and a restart forgets them. `check --deploy` with
  DEBUG off reports that as an error, so a production site is not deployed without Redis.
"""

from __future__ import annotations

from django.conf import settings
from django.core import checks

# Caches that live in one process: what they count, no other process sees.
PROCESS_LOCAL_CACHES = {
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
}


@checks.register(checks.Tags.caches, deploy=True)
def cache_shared_check(app_configs, **kwargs) -> list[checks.CheckMessage]:
    backend = settings.CACHES.get("default", {}).get("BACKEND", "")
    if settings.DEBUG or backend not in PROCESS_LOCAL_CACHES:
        return []
    return [
        checks.Error(
            "The cache is each process's own memory, so the rate limits count per process.",
            hint="Set REDIS_URL to the Redis every web process shares.",
            id="solutions.E001",
        )
    ]

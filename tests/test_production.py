"""The production settings: `check --deploy` is clean, the site refuses to start without a real
SECRET_KEY or without a shared cache (the rate limits count in it), migrations run on
PostgreSQL, the cache works on Redis, and gunicorn's settings file runs threaded workers on the
loopback with a timeout above every wait."""

from __future__ import annotations

import runpy
import sys
import uuid

import pytest
from django.conf import settings
from gunicorn.config import KNOWN_SETTINGS

from solutions.leaderboard.applier import APPLY_WAIT_SECONDS
from tests.services_available import POSTGRES_URL, REDIS_URL, require_postgres, require_redis
from tests.support.production import PRODUCTION, ROOT, manage, run


def test_the_production_settings_pass_the_deployment_check():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_with_debug_off_the_deployment_check_refuses_a_cache_of_each_process():
    """Without REDIS_URL each web process would count the rate limits by itself."""
    result = manage("check", "--deploy", **{**PRODUCTION, "REDIS_URL": None})
    assert result.returncode != 0
    assert "solutions.E001" in result.stderr and "REDIS_URL" in result.stderr
    development = manage("check", "--deploy", **{**PRODUCTION, "DEBUG": "true", "REDIS_URL": None})
    assert "solutions.E001" not in development.stdout + development.stderr


@pytest.mark.parametrize(
    "key",
    [None, "", "django-insecure-development-key-set-SECRET_KEY-in-production"],
    ids=["unset", "empty", "the development key"],
)
def test_with_debug_off_the_site_refuses_to_start_without_a_real_key(key):
    settings = run(
        [sys.executable, "-c", "import leaderboard_site.settings"],
        {"DEBUG": "false", "SECRET_KEY": key},
    )
    assert settings.returncode != 0
    assert "ImproperlyConfigured" in settings.stderr
    assert "SECRET_KEY is unset or the development key" in settings.stderr
    check = manage("check", "--deploy", **{**PRODUCTION, "SECRET_KEY": key})
    assert check.returncode != 0
    assert "SECRET_KEY" in check.stderr


def test_with_debug_on_the_development_key_is_fine():
    result = run([sys.executable, "-c", "import leaderboard_site.settings"], {"DEBUG": "true"})
    assert result.returncode == 0, result.stderr


def test_migrations_run_on_postgresql_and_seed_the_boards():
    require_postgres()
    import psycopg

    name = f"leaderboard_ci_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    url = POSTGRES_URL.rsplit("/", 1)[0] + f"/{name}"
    try:
        migrated = manage("migrate", "--no-input", DATABASE_URL=url, **PRODUCTION)
        assert migrated.returncode == 0, migrated.stderr
        with psycopg.connect(url) as connection:
            slugs = [
                row[0]
                for row in connection.execute("SELECT slug FROM solutions_board ORDER BY position")
            ]
        assert slugs == ["last-7-days", "last-30-days", "all-time", "streak", "longest-streak"]
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.parametrize("value", ["a solve", 42])
def test_the_cache_keeps_values_on_redis(value):
    require_redis()
    from django.core.cache.backends.redis import RedisCache

    cache = RedisCache(REDIS_URL, {})
    key = f"test:{uuid.uuid4().hex}"
    cache.set(key, value, timeout=30)
    assert cache.get(key) == value
    cache.delete(key)
    assert cache.get(key) is None


# --- gunicorn --------------------------------------------------------------------------------

GUNICORN_CONF = ROOT / "gunicorn.conf.py"
GUNICORN_ENV = ("GUNICORN_BIND", "PORT", "WEB_CONCURRENCY", "GUNICORN_THREADS", "GUNICORN_CMD_ARGS")


def gunicorn_config(**env: str) -> dict[str, str]:
    """The settings gunicorn itself takes from gunicorn.conf.py (`--print-config`), with `env`
    set in an environment that sets none of the file's variables otherwise."""
    unset: dict[str, str | None] = dict.fromkeys(GUNICORN_ENV)
    command = [sys.executable, "-m", "gunicorn", "-c", str(GUNICORN_CONF), "--print-config"]
    result = run([*command, "leaderboard_site.wsgi"], {"DEBUG": "true", **unset, **env})
    assert result.returncode == 0, result.stderr
    return {
        name.strip(): value.strip()
        for name, _, value in (line.partition("=") for line in result.stdout.splitlines())
    }


def test_gunicorn_runs_threaded_workers_on_the_loopback_with_a_timeout_above_every_wait():
    config = gunicorn_config()
    assert config["worker_class"] == "gthread" and int(config["threads"]) >= 2
    assert int(config["workers"]) >= 2
    assert config["bind"] == "['127.0.0.1:8000']"  # only the proxy beside it reaches it
    timeout = int(config["timeout"])
    assert timeout > APPLY_WAIT_SECONDS + 10  # the engine's longest wait for a solve
    assert timeout * 1000 > settings.MONGODB_SOCKET_TIMEOUT_MS + 10_000  # one command's
    assert int(config["graceful_timeout"]) > 20  # a solve's wait is kept under 20 s
    assert config["accesslog"] == "-"  # each request on stdout
    assert config["header_map"] == "drop"


def test_gunicorns_address_and_workers_come_from_the_environment():
    assert gunicorn_config(PORT="9000")["bind"] == "['127.0.0.1:9000']"
    private = gunicorn_config(GUNICORN_BIND="10.0.0.5:8000", PORT="9000")
    assert private["bind"] == "['10.0.0.5:8000']"
    sized = gunicorn_config(WEB_CONCURRENCY="3", GUNICORN_THREADS="8")
    assert (sized["workers"], sized["threads"]) == ("3", "8")


def test_every_name_the_gunicorn_file_sets_is_a_gunicorn_setting():
    """gunicorn ignores a name it does not know: a misspelt `graceful_timout` would change
    nothing, silently."""
    names = {
        name
        for name, value in runpy.run_path(str(GUNICORN_CONF)).items()
        if not name.startswith("_") and not callable(value) and type(value).__name__ != "module"
    }
    assert names and names <= {setting.name for setting in KNOWN_SETTINGS}


def test_every_task_beat_schedules_is_one_the_worker_knows():
    """A task misspelled in the schedule is refused by the worker every time, and nothing on the
    site says so: tomorrow's orders made at midnight under the lease, crashed solves never
    repaired. Every name in CELERY_BEAT_SCHEDULE is a task the worker registers."""
    from leaderboard_site.celery import app

    app.loader.import_default_modules()
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "solutions.tasks.days_prepare_task" in scheduled
    assert scheduled <= set(app.tasks), scheduled - set(app.tasks)

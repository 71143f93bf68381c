"""Django commands run as a production process would run them: a fresh process with the
settings module, the variables given (None: unset) and never the tests' own SECRET_KEY."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(command: list[str], env: dict[str, str | None]) -> subprocess.CompletedProcess:
    """`command` in a fresh process with the settings module and `env` (None: unset; the tests'
    own SECRET_KEY is not passed on)."""
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "leaderboard_site.settings"}
    environment.pop("SECRET_KEY", None)
    for name, value in env.items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return subprocess.run(
        command,
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def manage(*args: str, **env: str | None) -> subprocess.CompletedProcess:
    return run([sys.executable, "manage.py", *args], env)


PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": "a-long-random-production-key-" + "x7Kq9Lm2Pz" * 5,
    "ALLOWED_HOSTS": "leaderboard.example.com",
    "REDIS_URL": "redis://redis.example.com:6379/0",  # not reached by the checks
}

"""The development commands: the `.env` that `make run` writes lets the README's manage.py
commands run by hand in the checkout, and never reaches a production process; `make run` prints
the demo login on every start; `make demo-password` gives the demo user a new password and
changes nothing else. (`make run` itself, Ctrl-C included, is tests/test_run.py.)"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.core.management.base import CommandError

from demo import login
from solutions import mongo, selectors
from solutions.models import Problem, Programmer

ROOT = Path(__file__).resolve().parent.parent
# What bin/run writes, with a database of the test's own.
DEVELOPMENT_ENV = """# Written by `make run`
DEBUG=true
DATABASE_URL='sqlite:///{var}/db.sqlite3'
VAR_DIR='{var}'
SITE_URL='http://127.0.0.1:8765'
"""
# Everything the settings read from the environment in these tests (each test names its own).
NAMES = ("DEBUG", "SECRET_KEY", "DATABASE_URL", "VAR_DIR", "SITE_URL", "ENV_FILE")
PRODUCTION_KEY = "a-long-random-production-key-" + "x7Kq9Lm2Pz" * 5


@pytest.fixture
def env_file(tmp_path: Path) -> Path:
    path = tmp_path / ".env"
    path.write_text(DEVELOPMENT_ENV.format(var=tmp_path))
    return path


def started(env_file: Path, *command: str, **env: str) -> subprocess.CompletedProcess:
    """`command` started like a developer's by hand: none of the settings' variables in the
    environment but `env` (the tests' own SECRET_KEY included), and `env_file` as the .env."""
    environment = {name: value for name, value in os.environ.items() if name not in NAMES}
    environment.update(ENV_FILE=str(env_file), **env)
    return subprocess.run(
        command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )


def settings_seen(env_file: Path, **env: str) -> dict:
    """The settings a process started that way gets (or its error)."""
    shown = (
        "import json, leaderboard_site.settings as s; "
        "print(json.dumps({'DEBUG': s.DEBUG, 'SITE_URL': s.SITE_URL, "
        "'DATABASE': str(s.DATABASES['default']['NAME'])}))"
    )
    result = started(env_file, sys.executable, "-c", shown, **env)
    if result.returncode != 0:
        return {"error": result.stderr.strip().splitlines()[-1]}
    return json.loads(result.stdout)


def test_a_command_started_by_hand_reads_the_development_env_file(env_file, tmp_path):
    assert settings_seen(env_file) == {
        "DEBUG": True,
        "SITE_URL": "http://127.0.0.1:8765",
        "DATABASE": f"{tmp_path}/db.sqlite3",
    }


def test_a_variable_set_in_the_environment_wins_over_the_env_file(env_file):
    seen = settings_seen(env_file, SITE_URL="https://example.com")
    assert seen["DEBUG"] is True and seen["SITE_URL"] == "https://example.com"


@pytest.mark.parametrize(
    "env",
    [
        {"DEBUG": "false", "SECRET_KEY": PRODUCTION_KEY},
        {"SECRET_KEY": PRODUCTION_KEY},  # production with DEBUG unset: off by default
        {"DEBUG": "true"},
    ],
    ids=["debug off", "debug unset with a real key", "debug on"],
)
def test_a_process_that_sets_debug_or_a_secret_key_ignores_the_env_file(env_file, env):
    seen = settings_seen(env_file, **env)
    assert seen["SITE_URL"] == "http://127.0.0.1:8000"  # the default, not the file's
    assert str(env_file.parent) not in seen["DATABASE"]
    assert seen["DEBUG"] is (env.get("DEBUG") == "true")


def test_with_debug_false_in_the_environment_a_stray_env_file_never_turns_debug_on(env_file):
    """Nor does it lend its settings to a production process without a key: it refuses."""
    seen = settings_seen(env_file, DEBUG="false")
    assert "ImproperlyConfigured" in seen["error"]


def test_an_env_file_that_does_not_say_debug_true_is_ignored(env_file):
    env_file.write_text(env_file.read_text().replace("DEBUG=true", "DEBUG=false"))
    assert "ImproperlyConfigured" in settings_seen(env_file)["error"]
    env_file.write_text(env_file.read_text().replace("DEBUG=false\n", ""))
    assert "ImproperlyConfigured" in settings_seen(env_file)["error"]


def test_create_service_token_works_as_the_readme_writes_it_with_the_env_file(env_file):
    migrated = started(env_file, sys.executable, "manage.py", "migrate", "--no-input")
    assert migrated.returncode == 0, migrated.stderr
    made = started(env_file, sys.executable, "manage.py", "create_service_token", "judge")
    assert made.returncode == 0, made.stderr
    assert re.fullmatch(r"\S{30,}", made.stdout.strip().splitlines()[-1])


# --- the demo login ---------------------------------------------------------------------------


def command(name: str, *args: str) -> str:
    out = StringIO()
    call_command(name, *args, stdout=out)
    return out.getvalue()


def printed_password(output: str) -> str:
    found = re.search(r"Demo staff login: demo / (\S+) ", output)
    assert found, output
    return found.group(1)


@pytest.fixture
def development(settings):
    settings.DEBUG = True
    settings.SITE_URL = "http://127.0.0.1:8765"


@pytest.fixture
def demo_site(mongodb, now, boards, development, tmp_path):
    """A seeded demo whose password is kept where bin/run keeps it."""
    password_file = tmp_path / "var" / "demo-password"
    output = command("seed_demo", "--programmers", "8", "--password-file", str(password_file))
    return printed_password(output), password_file


def test_seeding_keeps_the_new_demo_password_in_a_file_only_its_owner_reads(demo_site):
    password, password_file = demo_site
    assert password_file.read_text().strip() == password
    assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
    assert authenticate(username="demo", password=password) is not None


def test_every_start_prints_the_demo_login_with_its_password_and_the_site(demo_site):
    password, password_file = demo_site
    again = command("seed_demo", "--if-empty", "--password-file", str(password_file))
    assert "no demo data added" in again and password not in again  # the banner comes last
    banner = command("demo_login", "--password-file", str(password_file))
    assert f"Demo staff login: demo / {password} (the site http://127.0.0.1:8765/" in banner


def test_the_banner_says_how_to_get_a_password_when_the_kept_one_no_longer_opens(demo_site):
    password, password_file = demo_site
    user = Programmer.objects.get(handle="demo").user
    user.set_password("changed on the account page")
    user.save()
    banner = command("demo_login", "--password-file", str(password_file))
    assert password not in banner and "make demo-password" in banner
    password_file.unlink()
    assert "make demo-password" in command("demo_login", "--password-file", str(password_file))


def test_the_banner_says_nothing_on_a_site_without_a_demo_user(db, tmp_path):
    assert command("demo_login", "--password-file", str(tmp_path / "none")) == ""


def test_the_banner_waits_until_the_server_accepts_connections():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        port = server.getsockname()[1]
        assert not login.port_accepts(port)  # bound, not yet listening
        server.listen()
        assert login.port_wait(port, seconds=5)


def test_demo_password_gives_a_new_password_and_changes_nothing_else(demo_site, boards):
    first, password_file = demo_site
    before = (
        Problem.objects.count(),
        list(Programmer.objects.values_list("handle", flat=True).order_by("handle")),
        mongo.solves().count_documents({}),
        selectors.board_page(board=boards["last-7-days"]).rows,
    )
    output = command("demo_password", "--password-file", str(password_file))
    second = printed_password(output)
    assert second != first
    assert authenticate(username="demo", password=first) is None
    assert authenticate(username="demo", password=second) is not None
    assert password_file.read_text().strip() == second
    assert before == (
        Problem.objects.count(),
        list(Programmer.objects.values_list("handle", flat=True).order_by("handle")),
        mongo.solves().count_documents({}),
        selectors.board_page(board=boards["last-7-days"]).rows,
    )


def test_make_reset_keeps_its_new_password_for_the_next_start(demo_site):
    first, password_file = demo_site
    output = command(
        "seed_demo", "--reset", "--no-input", "--programmers", "3",
        "--password-file", str(password_file),
    )  # fmt: skip
    second = printed_password(output)
    assert second != first and password_file.read_text().strip() == second


def test_demo_password_without_a_demo_user_says_how_to_make_one(db, development):
    with pytest.raises(CommandError, match="make reset"):
        command("demo_password")


def test_the_demo_password_is_never_kept_in_a_file_with_debug_off(db, tmp_path):
    password_file = tmp_path / "demo-password"
    with pytest.raises(CommandError, match="DEBUG"):
        command("demo_password", "--password-file", str(password_file))
    with pytest.raises(CommandError, match="DEBUG"):
        command("seed_demo", "--if-empty", "--password-file", str(password_file))
    assert not password_file.exists()

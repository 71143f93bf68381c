"""The demo login on the development site. The database keeps only the password's hash, so
`seed_demo` and `demo_password` also keep the password itself in a file of the development data
directory (`var/demo-password`, given by bin/run and bin/web), and every `make run` prints the
login last, once the site answers (`demo_login`). The file is written only with DEBUG on.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import CommandError

from demo.services import DEMO_USERNAME
from tools.embedded_mongo import port_accepts


def password_file_check() -> None:
    """The password is kept in a file only on a development site."""
    if not settings.DEBUG:
        raise CommandError("The demo password is kept in a file only in development (DEBUG=true).")


def password_file_write(path: Path, password: str) -> None:
    """Keep the demo password in `path`, readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600)
    path.chmod(0o600)  # a file that existed keeps its mode through touch()
    path.write_text(password + "\n")


def password_file_read(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except FileNotFoundError:
        return None


def login_line(password: str) -> str:
    site = settings.SITE_URL.rstrip("/")
    return (
        f"Demo staff login: {DEMO_USERNAME} / {password} "
        f"(the site {site}/ and the admin {site}/admin/)"
    )


def login_banner(*, password_file: Path) -> str | None:
    """The demo login when the kept password still opens it, otherwise how to get a new one;
    None when the site has no demo user."""
    user = User.objects.filter(username=DEMO_USERNAME).first()
    if user is None:
        return None
    password = password_file_read(password_file)
    if password and user.check_password(password):
        return login_line(password)
    return (
        f"Demo staff login: {DEMO_USERNAME} (its password is not known here, or was changed: "
        "`make demo-password` gives it a new one and prints it)."
    )


def port_wait(port: int, *, seconds: float) -> bool:
    """Whether a server accepts connections on `port` within `seconds`. Gives up early when this
    process's parent (the server, in bin/web) exits: honcho sees a process end only once all
    that process's children have closed its output too."""
    parent = os.getppid()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and os.getppid() == parent:
        if port_accepts(port):
            return True
        time.sleep(0.25)
    return False

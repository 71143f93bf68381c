"""Debian's Chromium for the browser tests (never a browser Playwright downloads): where it is,
how it is started, and the skip (or, under CI=true, the failure) when it is missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_chromium() -> None:
    """Skip with the reason when the browser is missing; fail under CI=true."""
    missing = None
    if not Path(CHROMIUM).exists():
        missing = f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            missing = "Playwright for Python is not installed (pip install -e '.[dev]')"
    if missing is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{missing}, and CI needs it")
    pytest.skip(missing)

"""The browser tests' Chromium (Debian's, driven by Playwright) against a live server speaking
plain HTTP, its tabs, and the site they open: Alice (BD, BUET) leads the board, Bob (IN) follows,
a crowd of others fills it, Staff is staff; a frozen contest. A test module uses the fixtures by
naming them at its top (`browser = shared.browser`, ...)."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import urllib.request
from pathlib import Path

import pytest
from django.db import connections
from django.test import Client, override_settings
from django.utils import timezone

from competitions import services as competition_services
from solutions import services
from solutions.models import Problem
from tests.conftest import make_programmer
from tests.support.chromium import CHROMIUM, CHROMIUM_FLAGS, require_chromium

SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "artifacts" / "screenshots"


PHONE = {"width": 390, "height": 844}


DESKTOP = {"width": 1280, "height": 900}


_ids = itertools.count()


@pytest.fixture(scope="module")
def browser():
    """One Chromium for all the tests here. Playwright's sync API keeps an event loop in this
    thread while it runs, so Django's guard against ORM calls from async code is lifted for
    these tests only (the calls are plain synchronous ones)."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    # Inside Playwright the test code runs in another context, where Django opens new database
    # connection objects: they need the migrations' serialized rows to restore the seeded
    # boards after each flush (serialized_rollback).
    serialized = getattr(connections["default"], "_test_serialized_contents", None)
    try:
        with sync_playwright() as playwright:
            if serialized is not None:
                connections["default"]._test_serialized_contents = serialized
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            yield chromium
            chromium.close()
    finally:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture(scope="module")
def live_server_http(request):
    """pytest-django's live server, speaking plain HTTP: no redirect to HTTPS (the security
    middleware reads that setting when the server starts, hence this fixture instead of the
    per-test settings) and no cookies marked Secure, which the browser would not send back."""
    plain = override_settings(
        SECURE_SSL_REDIRECT=False, SESSION_COOKIE_SECURE=False, CSRF_COOKIE_SECURE=False
    )
    with plain:
        yield request.getfixturevalue("live_server")


class Tab:
    """A browser page that remembers every console error and uncaught exception."""

    def __init__(self, context, base_url: str) -> None:
        self.page = context.new_page()
        self.base_url = base_url
        self.errors: list[str] = []
        self.page.on(
            "console",
            lambda message: message.type == "error" and self.errors.append(message.text),
        )
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def open(self, path: str):
        response = self.page.goto(self.base_url + path)
        self.page.wait_for_load_state("load")
        return response

    def screenshot(self, name: str) -> None:
        self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)

    def horizontal_overflow(self) -> int:
        """How many pixels the page is wider than the window (0: no horizontal scroll)."""
        return self.page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )


@pytest.fixture
def new_tab(browser, live_server_http):
    """Opens browser tabs (each in a context of its own: its own cookies), signed in as `user`
    when given. They are closed when the test ends, before the database is emptied, so no page
    still polls the server meanwhile."""
    contexts = []

    def open_tab(viewport=DESKTOP, user=None) -> Tab:
        context = browser.new_context(viewport=viewport)
        contexts.append(context)
        if user is not None:
            client = Client()
            client.force_login(user)
            session = client.cookies["sessionid"].value
            url = live_server_http.url
            context.add_cookies([{"name": "sessionid", "value": session, "url": url}])
        return Tab(context, live_server_http.url)

    yield open_tab
    for context in contexts:
        context.close()


def ago(minutes: float) -> dt.datetime:
    return timezone.now() - dt.timedelta(minutes=minutes)


@pytest.fixture
def site(mongodb):
    """Problems, Alice (3 solved today), Bob (2) and a crowd with 1 each, so the board has
    tiers and countries to show; a staff account."""
    problems = [
        Problem.objects.create(
            slug=f"p{i}", title=f"Problem {i}", answer=str(i * 7), statement=f"What is {i} × 7?"
        )
        for i in range(1, 7)
    ]
    alice = make_programmer("Alice", country="BD", organization="BUET")
    bob = make_programmer("bob", country="IN", organization="IIT Bombay")
    crowd = [
        make_programmer(f"coder{i:02}", country=code, organization=org)
        for i, (code, org) in enumerate(
            itertools.islice(
                itertools.cycle([("BD", "DU"), ("NP", ""), ("JP", "Kyoto University"), ("", "")]),
                12,
            )
        )
    ]
    for k, problem in enumerate(problems[:3]):
        services.solve_record(programmer=alice, problem=problem, solved_at=ago(90 - k))
    for k, problem in enumerate(problems[:2]):
        services.solve_record(programmer=bob, problem=problem, solved_at=ago(80 - k))
    for k, programmer in enumerate(crowd):
        services.solve_record(programmer=programmer, problem=problems[0], solved_at=ago(60 - k))
    staff = make_programmer("Staff").user
    staff.is_staff = staff.is_superuser = True
    staff.save()
    return {"problems": problems, "alice": alice, "bob": bob, "crowd": crowd, "staff": staff}


def post_solve(live_server_http, token: str, handle: str, problem: str) -> dict:
    """A judge reports a solve through the JSON API, over HTTP."""
    body = {
        "id": f"browser-{next(_ids)}",
        "programmer": handle,
        "problem": problem,
        "solved_at": timezone.now().isoformat(),
    }
    request = urllib.request.Request(
        f"{live_server_http.url}/api/v1/solves",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 201
        return json.load(response)


@pytest.fixture
def frozen_contest(site):
    """Started 2 hours ago, frozen 30 minutes ago. Alice solved A before the freeze; Bob
    answered A wrong before it and right after it, and B right after it."""
    contest = competition_services.competition_create(
        slug="winter-cup",
        title="Winter Cup",
        start=ago(120),
        end=ago(-60),
        freeze_at=ago(30),
        problems=site["problems"][:4],
    )
    for handle, problem, minutes, accepted in [
        ("Alice", "p1", 100, True),
        ("bob", "p1", 90, False),
        ("bob", "p1", 20, True),
        ("bob", "p2", 10, True),
    ]:
        competition_services.judge_submission_report(
            key=f"browser-{next(_ids)}",
            handle=handle,
            problem_slug=problem,
            accepted=accepted,
            submitted_at=ago(minutes),
        )
    return contest

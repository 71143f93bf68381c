"""Shared fixtures: the embedded MongoDB-compatible server, pinned time, and the personas.

Personas: Alice and Bob are programmers who solve problems; Charlie is a new programmer who has
solved nothing; Staff is a superuser.
"""

from __future__ import annotations

import datetime as dt
import importlib
import random
from collections.abc import Iterator

import mongomock
import pytest
import time_machine
from django.contrib.auth.models import User
from django.db.models.signals import post_migrate
from pymongo import InsertOne, MongoClient

from solutions import mongo, services
from solutions.leaderboard import WEEK, lease
from solutions.models import Board, Problem
from tests.support.commands import CommandLog
from tools.embedded_mongo import EmbeddedServer

# A fixed "now" for everything about days: 2020-01-19 12:00 UTC is epoch day 18280.
NOW = dt.datetime(2020, 1, 19, 12, 0, tzinfo=dt.UTC)


# The streak boards the migrations seed (`0008_streak_boards`), as defined there.
STREAK_BOARDS = importlib.import_module("solutions.migrations.0008_streak_boards").BOARDS


def streak_boards_left_out(sender, using, **kwargs) -> None:
    """The test database holds the three boards that count solves, without the two streak
    boards the migrations seed: the tests of the other boards read every board's score as a
    count of solves, and each board costs every solve one update more. Done once the migrations
    ran, so the copy that transactional tests restore leaves them out too; the streak boards'
    tests make them with `streak_boards`."""
    if sender.label == "solutions":
        Board.objects.using(using).filter(slug__in=[b["slug"] for b in STREAK_BOARDS]).delete()


post_migrate.connect(streak_boards_left_out, dispatch_uid="tests-streak-boards-left-out")


# Markers given by module (and, for the browser, by fixture), so no test file has to say what it
# is, and `pytest -m "not slow and not browser and not hunt"` is the quick loop.
BROWSER_MODULES = {"test_browser", "test_browser_pages", "test_browser_ui"}
BROWSER_FIXTURES = {"browser", "new_tab", "chromium"}  # Chromium driven through Playwright
HUNT_MODULES = {  # random faults, interleavings and inputs, many seeds or examples each
    "test_crash_anywhere",
    "test_stale_applier",
    "test_api_fuzz",
    "test_forms_fuzz",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = item.path.stem
        if module in BROWSER_MODULES or BROWSER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.browser)
        if module in HUNT_MODULES:
            item.add_marker(pytest.mark.hunt)


@pytest.fixture
def streak_boards(mongodb) -> dict[str, Board]:
    """The two streak boards, as the migrations seed them on a site: "Current streak" and
    "Longest streak"."""
    made = {board["slug"]: Board.objects.create(**board) for board in STREAK_BOARDS}
    mongo.ensure_indexes(list(made))
    return made


@pytest.fixture(autouse=True)
def plain_http(settings):
    """The test client speaks plain HTTP; production redirects it to HTTPS."""
    settings.SECURE_SSL_REDIRECT = False


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """Hashing passwords properly is slow by design; tests make many personas."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="session")
def embedded_server():
    """One in-memory server for the session, started like `make run` starts its own. Its TTL
    sweeper is off: tests pin the clock to 2020, so the sweeper (on the real clock) would delete
    every document with an expiry (rank samples, notifications, locks) at some moment of a test."""
    with EmbeddedServer(expire=False) as server:
        yield server


@pytest.fixture
def mongodb(embedded_server, settings, db):
    """The embedded server, with an empty database for this test."""
    settings.MONGODB_DB = "leaderboard_test"
    client = MongoClient(embedded_server.uri, tz_aware=True)
    client.drop_database(settings.MONGODB_DB)
    mongo.set_client(client)
    mongo.indexes_ensure()
    yield client[settings.MONGODB_DB]
    mongo.set_client(None)
    client.close()


@pytest.fixture
def mongo_commands(mongodb, embedded_server) -> Iterator[CommandLog]:
    """The MongoDB commands the site sends (pymongo's command monitoring)."""
    log = CommandLog()
    client = MongoClient(embedded_server.uri, tz_aware=True, event_listeners=[log])
    mongo.set_client(client)
    yield log
    client.close()


@pytest.fixture
def mockdb(settings):
    """mongomock, for the parts of the storage it implements (not the engine's pipelines)."""
    settings.MONGODB_DB = "leaderboard_test"
    client = mongomock.MongoClient(tz_aware=True)
    mongo.set_client(client)
    mongo.ensure_indexes([])
    yield client[settings.MONGODB_DB]
    mongo.set_client(None)


@pytest.fixture
def now():
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def boards(db):
    return {board.slug: board for board in Board.objects.all()}


@pytest.fixture
def boards_of_every_kind(mongodb, boards):
    """The seeded boards made to differ: unique ties on 30 days, points all-time, plus a
    calendar week."""
    boards["last-30-days"].ties = Board.UNIQUE
    boards["last-30-days"].save()
    boards["all-time"].metric = Board.POINTS
    boards["all-time"].save()
    boards["this-week"] = Board.objects.create(slug="this-week", title="This week", window=WEEK)
    mongo.ensure_indexes(list(boards))
    return boards


@pytest.fixture
def problems(db):
    return [
        Problem.objects.create(slug=f"p{i}", title=f"Problem {i}", answer=str(i * 7), points=10 * i)
        for i in range(1, 11)
    ]


def make_programmer(handle: str, password: str = "correct horse battery", **profile):
    user = User.objects.create_user(username=handle.lower(), password=password)
    return services.programmer_create(user=user, handle=handle, **profile)


def random_solves(
    rng: random.Random, programmer, problems, *, start: dt.datetime, days: int, late_hours: int
) -> list[tuple]:
    """A random history's solves of one programmer: some of `problems`, each at a random moment
    of the `days` from `start`, a third reported late (up to `late_hours` after). Events to sort
    by their first item: (reported at, "solve", programmer, problem, solved at)."""
    events = []
    for problem in rng.sample(problems, rng.randrange(len(problems) + 1)):
        solved_at = start + dt.timedelta(seconds=rng.randrange(days * 86400))
        late_by = rng.randrange(1, late_hours) if rng.random() < 0.33 else 0
        late = dt.timedelta(hours=late_by)
        events.append((solved_at + late, "solve", programmer, problem, solved_at))
    return events


@pytest.fixture
def alice(db):
    return make_programmer("Alice", country="BD", organization="BUET")


@pytest.fixture
def bob(db):
    return make_programmer("bob", country="IN")


@pytest.fixture
def charlie(db):
    return make_programmer("charlie")


@pytest.fixture
def staff(db):
    return User.objects.create_superuser("staff", "staff@example.com", "correct horse battery")


@pytest.fixture(autouse=True)
def empty_cache():
    """Every test starts with an empty cache: board versions start again from nothing in each
    test's fresh database, so rows cached by an earlier test must not answer for them (nor
    this process's copies of them, `solutions.recent`)."""
    from django.core.cache import cache

    from solutions import recent

    cache.clear()
    recent.clear()
    yield
    cache.clear()
    recent.clear()


def lease_run_out() -> None:
    """The applier's lease runs out now, as when its holder stopped `lease.LEASE_SECONDS` ago:
    the lease is timed by the server's clock, which the tests' pinned time does not move."""
    lease.appliers().update_one({"_id": lease.LEASE}, {"$set": {"until": 0}})


def crash_in_a_solves_first_write(monkeypatch, keep: int, error: Exception) -> None:
    """The storage goes away in the middle of each new solve's first command (its log, its
    counts on the boards, then its problem's count, day index, chunk and mark, in that order):
    only its first `keep` writes are done (negative: all but the last ones)."""
    real = mongo.write_together

    def crashing(writes):
        if writes and isinstance(writes[0], InsertOne):  # a new solve's first command
            real(writes[:keep])
            raise error
        return real(writes)

    monkeypatch.setattr(mongo, "write_together", crashing)

"""The live pages share one layer (`solutions.live`, `solutions.etags`): a board's rows and a
competition's standings are rendered once per version, a poll arriving while another renders
the new version gets the one before (without an ETag, so its next poll gets the new one), the
standings' table answers 304 to its own ETag like the boards, and a GET writes nothing."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from activity.services.follows import follow_create
from competitions import attempts as competition_attempts
from competitions import selectors as competition_selectors
from competitions import services as competition_services
from competitions import standings_pages
from solutions import live, selectors, services
from tests.conftest import NOW
from tests.support.pages import rows

BOARD_LIVE = "/leaderboard/last-7-days/live/"
STANDINGS = "/competitions/spring/standings/"
STANDINGS_LIVE = "/competitions/spring/standings/live/"


def spring(problems, **times):
    times = {"start": NOW - dt.timedelta(hours=1), "end": NOW + dt.timedelta(hours=2)} | times
    return competition_services.competition_create(
        slug="spring", title="Spring", problems=problems[:2], **times
    )


def report(problems, handle: str, minute: int, start=NOW - dt.timedelta(hours=1)) -> None:
    competition_services.judge_submission_report(
        key=f"{handle}-{minute}",
        handle=handle,
        problem_slug=problems[0].slug,
        accepted=True,
        submitted_at=start + dt.timedelta(minutes=minute),
    )


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def poll(client: Client, url: str, etag: str):
    return client.get(url, headers={"if-none-match": etag})


def burst_while_rendering(render, url: str, etag: str) -> tuple[Callable, list, list]:
    """`render` wrapped so that, while it runs, three more polls of `url` arrive (a burst): the
    wrapper, the renderings it counts and the burst's responses."""
    reads, during = [], []

    def rendering(**kwargs):
        reads.append(1)
        if len(during) < 3:
            during.append(poll(Client(), url, etag))
        return render(**kwargs)

    return rendering, reads, during


def test_a_board_poll_while_another_renders_gets_the_rows_before_and_no_etag(
    mongodb, now, boards, problems, alice, bob, monkeypatch
):
    services.solve_record(programmer=alice, problem=problems[0], solved_at=NOW)
    first = Client().get(BOARD_LIVE)
    services.solve_record(programmer=bob, problem=problems[0], solved_at=NOW)
    now.shift(live.POLLED_VERSION_SECONDS)
    rendering, reads, during = burst_while_rendering(
        selectors.board_page, BOARD_LIVE, first["ETag"]
    )
    monkeypatch.setattr(selectors, "board_page", rendering)
    after = poll(Client(), BOARD_LIVE, first["ETag"])
    assert len(reads) == 1  # one rendering for the whole burst
    for older in during:
        assert older.status_code == 200 and not older.has_header("ETag")
        assert [row[1] for row in rows(older)] == ["Alice"]
    assert after.status_code == 200 and after["ETag"] != first["ETag"]
    assert [row[1] for row in rows(after)] == ["Alice", "bob"]
    # The page kept for the new ETag is the new one, not one of the burst's.
    assert [row[1] for row in rows(Client().get(BOARD_LIVE))] == ["Alice", "bob"]


def test_a_standings_poll_while_another_renders_gets_the_table_before_and_no_etag(
    mongodb, now, problems, monkeypatch
):
    spring(problems)
    report(problems, "Alice", 5)
    first = Client().get(STANDINGS_LIVE)
    report(problems, "bob", 7)
    now.shift(competition_selectors.CACHED_STANDINGS_VERSION_SECONDS)
    rendering, reads, during = burst_while_rendering(
        competition_attempts.every, STANDINGS_LIVE, first["ETag"]
    )
    monkeypatch.setattr(competition_attempts, "every", rendering)
    after = poll(Client(), STANDINGS_LIVE, first["ETag"])
    assert len(reads) == 1
    for older in during:
        assert older.status_code == 200 and not older.has_header("ETag")
        assert "Alice" in older.text and "bob" not in older.text
    assert after.status_code == 200 and "bob" in after.text
    assert poll(Client(), STANDINGS_LIVE, after["ETag"]).status_code == 304


def test_the_standings_page_starts_its_polls_from_the_tables_etag(mongodb, now, problems):
    spring(problems)
    report(problems, "Alice", 5)
    page = Client().get(STANDINGS)
    etag = re.search(r'data-live-etag="([^"]+)"', page.text).group(1).replace("&quot;", '"')
    assert poll(Client(), STANDINGS_LIVE, etag).status_code == 304
    report(problems, "bob", 7)
    now.shift(competition_selectors.CACHED_STANDINGS_VERSION_SECONDS)
    changed = poll(Client(), STANDINGS_LIVE, etag)
    assert changed.status_code == 200 and "bob" in changed.text


def test_the_standings_etag_is_each_viewers_own(mongodb, now, problems, alice, bob, staff):
    spring(problems, freeze_at=NOW + dt.timedelta(minutes=30))
    report(problems, "Alice", 5)
    clients = {
        "visitor": Client(),
        "alice": signed_in(alice.user),
        "staff": signed_in(staff),
        "following": signed_in(bob.user),
    }
    urls = {name: STANDINGS_LIVE for name in clients} | {
        "following": STANDINGS_LIVE + "?view=following"
    }
    etags = {name: client.get(urls[name])["ETag"] for name, client in clients.items()}
    assert len(set(etags.values())) == len(etags)
    for name, client in clients.items():
        assert poll(client, urls[name], etags[name]).status_code == 304
    # Staff see every attempt at once; the public within seconds.
    report(problems, "Alice", 6)
    assert poll(clients["staff"], urls["staff"], etags["staff"]).status_code == 200
    assert poll(clients["visitor"], STANDINGS_LIVE, etags["visitor"]).status_code == 304
    follow_create(user=bob.user, programmer=alice)
    followed = poll(clients["following"], urls["following"], etags["following"])
    assert followed.status_code == 200 and "Alice" in followed.text


def test_the_standings_etag_changes_at_the_freeze_and_at_the_end(mongodb, now, problems):
    spring(problems, freeze_at=NOW + dt.timedelta(minutes=30))
    report(problems, "Alice", 5)
    etag = Client().get(STANDINGS_LIVE)["ETag"]
    now.shift(dt.timedelta(minutes=31))
    frozen = poll(Client(), STANDINGS_LIVE, etag)
    assert frozen.status_code == 200 and "Frozen at" in frozen.text
    now.shift(dt.timedelta(hours=2))
    final = poll(Client(), STANDINGS_LIVE, frozen["ETag"])
    assert final.status_code == 200 and "Final standings" in final.text
    assert poll(Client(), STANDINGS_LIVE, final["ETag"]).status_code == 304


def test_a_registration_shows_on_the_standings_at_the_next_poll(mongodb, now, problems, alice):
    contest = spring(problems)
    etag = Client().get(STANDINGS_LIVE)["ETag"]
    competition_services.competition_register(competition=contest, programmer=alice)
    now.shift(competition_selectors.CACHED_STANDINGS_VERSION_SECONDS)
    registered = poll(Client(), STANDINGS_LIVE, etag)
    assert registered.status_code == 200 and "Alice" in registered.text


def test_no_get_of_a_live_page_writes(mongodb, now, boards, problems, alice, mongo_commands):
    """The archive of an ended competition is beat's task's (`competitions.tasks`), never a
    view's; the caches are Django's, not the database."""
    services.solve_record(programmer=alice, problem=problems[0], solved_at=NOW)
    contest = spring(problems, start=NOW - dt.timedelta(hours=3), end=NOW - dt.timedelta(hours=1))
    clients = (Client(), signed_in(alice.user))  # a login writes its session: not a GET
    mongo_commands.clear()
    with CaptureQueriesContext(connection) as queries:
        for url in (BOARD_LIVE, "/leaderboard/last-7-days/", STANDINGS, STANDINGS_LIVE):
            for client in clients:
                assert client.get(url).status_code == 200
    writes = [q["sql"] for q in queries if not q["sql"].lstrip().upper().startswith("SELECT")]
    assert writes == []
    assert set(mongo_commands.names) <= {"find", "aggregate", "getMore", "count"}
    contest.refresh_from_db()
    assert not contest.is_archived


def test_an_edit_no_version_counts_shows_on_the_standings_within_their_cache_time(
    mongodb, now, problems
):
    """A problem renamed in the admin bumps no version: the table is kept, and its ETag holds,
    PUBLIC_STANDINGS_SECONDS at most, as before the ETags."""
    spring(problems)
    report(problems, "Alice", 5)
    etag = Client().get(STANDINGS_LIVE)["ETag"]
    problems[0].title = "Renamed at the judges' desk"
    problems[0].save()
    now.shift(dt.timedelta(seconds=standings_pages.PUBLIC_STANDINGS_SECONDS + 1))
    renamed = poll(Client(), STANDINGS_LIVE, etag)
    assert renamed.status_code == 200 and "Renamed at the judges" in renamed.text

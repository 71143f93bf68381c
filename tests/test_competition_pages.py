"""What the competition pages tell a participant at a glance (issue 38, part 3): the list's length,
countdown and number taking part; the standings' "following only" filter, the solved/tried row
(frozen cells respected) and the way out of display mode; "Log in to take part" as a link.

Personas as in conftest: Winter Cup runs 09:00-14:00 UTC on 2020-01-19 and "now" is 12:00.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re

import pytest
import time_machine
from django.template.loader import render_to_string
from django.test import Client

from activity.services.follows import follow_create
from competitions import attempts as competition_attempts
from competitions import selectors as competition_selectors
from competitions import services, standings_pages
from competitions.tasks import archive_finished_competitions_task
from solutions import recent
from solutions import services as solution_services
from solutions.models import Programmer
from tests.conftest import NOW

START = dt.datetime(2020, 1, 19, 9, 0, tzinfo=dt.UTC)
END = dt.datetime(2020, 1, 19, 14, 0, tzinfo=dt.UTC)
STANDINGS = "/competitions/winter-cup/standings/"
_keys = itertools.count()


def report(handle: str, problem: str, at_minute: float, accepted: bool = True):
    """A judge's verdict, as the API records it."""
    return services.judge_submission_report(
        key=f"pages-{next(_keys)}",
        handle=handle,
        problem_slug=problem,
        accepted=accepted,
        submitted_at=START + dt.timedelta(minutes=at_minute),
    )


def logged_in(programmer) -> Client:
    client = Client()
    client.force_login(programmer.user)
    return client


@pytest.fixture
def contest(mongodb, now, problems):
    """Running, with p1, p2, p3 as A, B, C."""
    return services.competition_create(
        slug="winter-cup", title="Winter Cup", start=START, end=END, problems=problems[:3]
    )


@pytest.fixture
def frozen(contest, alice, bob, charlie):
    """Frozen at 11:00 (minute 120). Alice solved A at minute 60, Charlie tried A and B before
    the freeze and got neither, Bob solved A and B after it."""
    contest.freeze_at = START + dt.timedelta(minutes=120)
    contest.save()
    report("Alice", "p1", 60)
    report("charlie", "p1", 70, accepted=False)
    report("charlie", "p2", 80, accepted=False)
    report("bob", "p1", 130)
    report("bob", "p2", 140)
    return contest


def totals(page: str) -> list[str]:
    """The solved/tried row under the table, column by column."""
    row = page[page.index('<tr class="totals">') :].split("</tr>")[0]
    return re.findall(r'<td class="cell"[^>]*>(\d+/\d+)</td>', row)


def handles(page: str) -> list[str]:
    return re.findall(r'<td class="who"><a href="/u/(\w+)/">', page)


# --- the list --------------------------------------------------------------------------------


def test_the_list_shows_each_length_a_countdown_to_the_upcoming_and_who_registered(
    contest, problems, alice, bob
):
    spring = services.competition_create(
        slug="spring",
        title="Spring Cup",
        start=NOW + dt.timedelta(days=2, hours=3),
        end=NOW + dt.timedelta(days=2, hours=5, minutes=30),
        problems=problems[:1],
        registration_required=True,
    )
    services.competition_register(competition=spring, programmer=alice)
    services.competition_register(competition=spring, programmer=bob)
    text = Client().get("/competitions/").text
    winter = text[text.index("Winter Cup") : text.index("</tr>", text.index("Winter Cup"))]
    assert "5 hours" in winter and "Open to all" in winter and "Starts in" not in winter
    upcoming = text[text.index("Spring Cup") : text.index("</tr>", text.index("Spring Cup"))]
    assert "2 hours 30 minutes" in upcoming and "2 registered" in upcoming
    # The countdown as of the request, which the page's clock script then ticks.
    assert "Starts in</span> <time" in upcoming and "2 days 3:00:00" in upcoming
    assert 'data-clock data-start="2020-01-21T15:00:00Z"' in upcoming


# --- the standings ---------------------------------------------------------------------------


def test_following_only_lists_the_people_you_follow_and_you_with_their_ranks(
    frozen, alice, bob, charlie
):
    everybody = logged_in(alice).get(STANDINGS).text
    assert handles(everybody) == ["Alice", "bob", "charlie"]
    assert "Following only</a>" in everybody
    follow_create(user=alice.user, programmer=charlie)
    page = logged_in(alice).get(STANDINGS, {"view": "following"}).text
    assert handles(page) == ["Alice", "charlie"]
    ranks = re.findall(r'data-rank="(\d+)"', page)
    # Their ranks among everybody, as on the boards: Charlie shares 2nd with Bob (nothing solved
    # before the freeze).
    assert ranks == ["1", "2"]
    assert '<span class="current" aria-current="true">Following only</span>' in page
    # The table the page polls keeps to the same people.
    assert 'data-live-url="/competitions/winter-cup/standings/live/?view=following"' in page
    polled = logged_in(alice).get("/competitions/winter-cup/standings/live/?view=following")
    assert handles(polled.text) == ["Alice", "charlie"]
    # Whoever follows nobody sees their own row only; an anonymous viewer is asked to log in.
    assert handles(logged_in(bob).get(STANDINGS, {"view": "following"}).text) == ["bob"]
    anonymous = Client().get(STANDINGS, {"view": "following"}).text
    assert handles(anonymous) == []
    assert (
        '<a href="/accounts/login/?next=/competitions/winter-cup/standings/%3Fview%3Dfollowing">'
        "Log in</a> to see the people you follow" in anonymous
    )


def test_the_solved_and_tried_row_shows_no_solve_the_freeze_holds(frozen, staff, bob):
    # The public: Bob's answers after the freeze are pending, tried but not solved.
    assert totals(Client().get(STANDINGS).text) == ["1/3", "0/2", "0/0"]
    # Staff see the live standings, and Bob his own row live.
    staff_client = Client()
    staff_client.force_login(staff)
    assert totals(staff_client.get(STANDINGS).text) == ["2/3", "1/2", "0/0"]
    assert totals(logged_in(bob).get(STANDINGS).text) == ["2/3", "1/2", "0/0"]
    # The following view still counts everybody.
    assert totals(Client().get(STANDINGS, {"view": "following"}).text) == ["1/3", "0/2", "0/0"]
    with time_machine.travel(END + dt.timedelta(minutes=1), tick=False):
        archive_finished_competitions_task()
        assert totals(Client().get(STANDINGS).text) == ["2/3", "1/2", "0/0"]


def test_display_mode_has_a_visible_way_out(contest, alice):
    report("Alice", "p1", 10)
    page = Client().get(STANDINGS).text
    assert '<a class="display-link" href="?display=1"' in page
    shown = Client().get(STANDINGS, {"display": "1", "view": "following"}).text
    assert '<html lang="en" class="display">' in shown or 'class="display"' in shown
    assert '<a class="leave-display" href="?view=following">Leave display mode</a>' in shown


# --- taking part -----------------------------------------------------------------------------


def test_log_in_to_take_part_is_a_link_back_to_the_competition(contest, alice):
    page = Client().get("/competitions/winter-cup/").text
    assert (
        '<a href="/accounts/login/?next=/competitions/winter-cup/">Log in to take part</a>' in page
    )
    # Signed in, nothing to log in to.
    assert "Log in to take part" not in logged_in(alice).get("/competitions/winter-cup/").text


def test_the_standings_page_under_load_reads_the_attempts_once_per_change(
    frozen, now, monkeypatch, alice, bob
):
    """Opened by many while the competition runs, the page's table is the one its polls get,
    from the cache: the attempts are read and ranked once per change of the standings, for
    everybody anonymous, and again after a new attempt."""
    real, reads = competition_selectors.competition_live_rows, []

    def counted(**kwargs):
        reads.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(competition_selectors, "competition_live_rows", counted)
    pages = [Client().get(STANDINGS) for _ in range(3)]
    assert all(page.status_code == 200 for page in pages) and len(reads) == 1
    assert handles(pages[0].content.decode()) == handles(pages[2].content.decode())
    report("Charlie", "p1", 125)
    # The standings' version is read through the cache for a few seconds.
    now.shift(dt.timedelta(seconds=competition_selectors.CACHED_STANDINGS_VERSION_SECONDS + 1))
    assert Client().get(STANDINGS).status_code == 200 and len(reads) == 2


# --- pages of the standings ------------------------------------------------------------------


@pytest.fixture
def five_solvers(contest, monkeypatch, alice):
    """Pages of two rows: four solvers of A ahead of Alice, who solved it last (minute 50)."""
    monkeypatch.setattr(competition_selectors, "STANDINGS_PAGE_SIZE", 2)
    for n in range(1, 5):
        report(f"solver{n}", "p1", 10 * n)
    report("Alice", "p1", 50)
    return contest


def test_the_standings_show_a_page_of_rows_at_a_time_ranked_among_everybody(five_solvers):
    pages = [Client().get(STANDINGS, {"page": n}) for n in (1, 2, 3)]
    assert [handles(page.text) for page in pages] == [
        ["solver1", "solver2"],
        ["solver3", "solver4"],
        ["Alice"],
    ]
    assert re.findall(r'data-rank="(\d+)"', pages[1].text) == ["3", "4"]
    # The solved/tried row counts everybody on every page.
    assert {tuple(totals(page.text)) for page in pages} == {("5/5", "0/0", "0/0")}
    assert '<a href="?page=2" rel="next">' in pages[0].text
    assert '<a href="?page=1" rel="prev">' in pages[1].text
    assert '<span class="current" aria-current="page">3</span>' in pages[2].text
    # Each page polls its own rows, with an ETag of its own.
    assert 'data-live-url="/competitions/winter-cup/standings/live/?page=2"' in pages[1].text
    polled = [Client().get(f"{STANDINGS}live/", {"page": n}) for n in (1, 2)]
    assert [handles(poll.text) for poll in polled] == [
        ["solver1", "solver2"],
        ["solver3", "solver4"],
    ]
    assert polled[0]["ETag"] != polled[1]["ETag"]
    # The API still lists every row.
    api = Client().get("/api/v1/competitions/winter-cup/standings").json()
    assert [row["handle"] for row in api["rows"]] == [f"solver{n}" for n in range(1, 5)] + ["Alice"]


def test_a_programmer_is_shown_the_page_of_their_own_row(five_solvers, now, alice):
    first = logged_in(alice).get(STANDINGS).text
    assert '<a href="?page=3">Your row is on page 3</a>' in first
    own = logged_in(alice).get(STANDINGS, {"page": 3}).text
    assert "Your row is on page" not in own
    assert re.search(r'<tr data-key="\d+"[^>]* class="me">', own)
    # Nobody anonymous is told of a row of theirs.
    assert "Your row is on page" not in Client().get(STANDINGS).text
    # Two rows ahead of hers hidden: the next version's link follows her row.
    for handle in ("solver1", "solver2"):
        solution_services.programmer_set_visibility(
            programmer=Programmer.objects.get(handle=handle), hidden=True
        )
    now.shift(dt.timedelta(seconds=competition_selectors.CACHED_STANDINGS_VERSION_SECONDS))
    assert "Your row is on page 2" in logged_in(alice).get(f"{STANDINGS}live/").text
    # The process keeps one map of the rows' pages a competition, however long it is watched.
    for _ in range(4):
        now.shift(dt.timedelta(seconds=standings_pages.PUBLIC_STANDINGS_SECONDS))
        assert "Your row is on page 2" in logged_in(alice).get(f"{STANDINGS}live/").text
    assert len([name for name in recent._LATEST if name.startswith("standings-pages")]) == 1


def test_a_page_past_the_last_or_no_page_number_says_so(five_solvers):
    past = Client().get(STANDINGS, {"page": 4})
    assert past.status_code == 404
    assert "There is no page 4: the standings have 3 pages." in past.text
    assert Client().get(f"{STANDINGS}live/", {"page": 4}).status_code == 404
    for wrong in ("0", "-1", "two", "1.5", "9" * 20):
        page = Client().get(STANDINGS, {"page": wrong})
        assert page.status_code == 400 and "Enter the page as a whole number from 1." in page.text
        live = Client().get(f"{STANDINGS}live/", {"page": wrong})
        assert live.status_code == 400 and "Enter the page as a whole number from 1." in live.text


def test_the_final_standings_keep_their_pages(five_solvers):
    with time_machine.travel(END + dt.timedelta(minutes=1), tick=False):
        archive_finished_competitions_task()
        page = Client().get(STANDINGS, {"page": 2}).text
    assert handles(page) == []  # final: handles without links
    assert re.findall(r'<td class="who">(\w+)', page) == ["solver3", "solver4"]
    assert "data-live-url" not in page and '<a href="?page=3" rel="next">' in page


@pytest.fixture
def watched(contest, monkeypatch, alice, bob, charlie):
    """Pages of two rows: Bob and Charlie on the first, two judges' programmers without an
    account on the second, Alice alone on the third."""
    monkeypatch.setattr(competition_selectors, "STANDINGS_PAGE_SIZE", 2)
    for handle, minute in (("bob", 10), ("charlie", 20), ("judged1", 30), ("judged2", 40)):
        report(handle, "p1", minute)
    report("Alice", "p1", 50)
    return contest


def test_before_the_freeze_each_programmer_sees_their_own_row_marked_on_every_page(
    watched, now, alice, bob, charlie
):
    """Signed-in programmers share the public table and get their own row marked in it: the
    same page, byte for byte, as the template makes of their own view."""
    for programmer in (alice, bob, charlie):
        view = competition_selectors.competition_standings(
            competition=watched, user=programmer.user, now=NOW
        )
        for page in (1, 2, 3):
            view.page = page
            own = render_to_string(
                "competitions/_standings.html",
                {"view": view, "following": False, "user": programmer.user},
            )
            polled = logged_in(programmer).get(f"{STANDINGS}live/", {"page": page}).text
            assert own in polled, (programmer.handle, page)
            assert ('class="me"' in polled) == (page == view.viewer_page)


def test_programmers_watching_the_standings_share_one_reading_of_the_attempts(
    watched, monkeypatch, alice, bob, charlie
):
    real, reads = competition_selectors.competition_live_rows, []

    def counted(**kwargs):
        reads.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(competition_selectors, "competition_live_rows", counted)
    for client in (logged_in(alice), logged_in(bob), logged_in(charlie), Client()):
        assert client.get(f"{STANDINGS}live/").status_code == 200
    # The public table, and once the pages of everybody's rows (for Alice's link to page 3).
    assert len(reads) == 2


def test_every_rendering_of_one_version_reads_the_attempts_once(
    frozen, now, monkeypatch, alice, bob, charlie
):
    """Past the freeze each participant has a table of their own (their own row is live), and
    the public table a rendering a page: on contest day each read every attempt of the
    competition, the biggest read of the embedded server. One version of the standings reads
    them once for all of them; the next version again."""
    real, reads = competition_attempts.every, []
    monkeypatch.setattr(
        competition_attempts,
        "every",
        lambda **kwargs: reads.append(1) or real(**kwargs),
    )
    mine = {p.handle: logged_in(p).get(f"{STANDINGS}live/").text for p in (alice, bob, charlie)}
    public = Client().get(f"{STANDINGS}live/").text
    assert len(reads) == 1
    # Each still sees their own: Bob's answers after the freeze count for him alone.
    assert handles(mine["bob"])[:2] == ["bob", "Alice"] and handles(public)[0] == "Alice"
    assert totals(mine["bob"]) == ["2/3", "1/2", "0/0"] and totals(public) != totals(mine["bob"])
    report("charlie", "p3", 150)
    now.shift(dt.timedelta(seconds=competition_selectors.CACHED_STANDINGS_VERSION_SECONDS))
    assert "charlie" in logged_in(charlie).get(f"{STANDINGS}live/").text
    assert logged_in(alice).get(f"{STANDINGS}live/").status_code == 200
    assert len(reads) == 2

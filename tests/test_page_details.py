"""The details of the pages that need no browser: the rank badges against a brute force over a
board with ties, every time as a `<time>` element with UTC in its title, the competition clock
as the server writes it (what a page shows without JavaScript), the skip link, and a profile
with no history.

Personas as in conftest; "now" is 2020-01-19 12:00 UTC.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import zoneinfo

import pytest
import time_machine
from django.template import Context, Template
from django.test import Client
from django.utils.dateformat import format as date_format

from competitions import services as competition_services
from solutions import services as solution_services
from solutions.templatetags.times import duration_text
from tests.conftest import NOW
from tests.support.pages import crowd, row_html, signed_in


def badges(page: str, handles: list[str]) -> dict[str, str]:
    """The badge each handle's row shows: "1%", "10%" or ""."""
    found = {}
    for handle in handles:
        badge = re.search(r'<span class="tier top1?0?"[^>]*>([^<]+)</span>', row_html(page, handle))
        found[handle] = badge.group(1) if badge else ""
    return found


def brute_force_badges(scores: list[int]) -> list[str]:
    """The rule, computed the slow way: the share of the board with each score or more."""
    total = len(scores)
    result = []
    for score in scores:
        share = sum(1 for other in scores if other >= score) / total
        result.append("1%" if share <= 0.01 else "10%" if share <= 0.10 else "")
    return result


# --- rank badges -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "scores",
    [
        pytest.param([5, 5, 5] + [1] * 213, id="three tied first of 216"),
        pytest.param([6, 5, 5] + [4] * 19 + [1] * 177, id="a leader then ties across the 10% line"),
        pytest.param([3] + [2] * 9 + [1] * 90, id="one leader of 100"),
    ],
)
def test_it_badges_the_share_of_the_board_at_or_above_each_score(mongodb, now, boards, scores):
    programmers = crowd(scores)
    handles = [programmer.handle for programmer in programmers]
    shown = badges(Client().get("/leaderboard/").text, handles[:25])
    shown |= badges(Client().get("/leaderboard/?page=2").text, handles[25:50])
    expected = dict(zip(handles, brute_force_badges(scores), strict=True))
    assert shown == {handle: expected[handle] for handle in handles[:50]}


def test_three_tied_first_of_216_are_not_the_top_one_percent(mongodb, now, boards):
    crowd([5, 5, 5] + [1] * 213)
    page = Client().get("/leaderboard/").text
    assert set(badges(page, ["p00", "p01", "p02"]).values()) == {"10%"}
    assert "A tie counts whole." in page


def test_a_searched_programmer_keeps_the_badge_the_board_gives_them(mongodb, now, boards):
    crowd([3] + [2] * 9 + [1] * 90)
    assert badges(Client().get("/leaderboard/?q=p00").text, ["p00"]) == {"p00": "1%"}


# --- times -----------------------------------------------------------------------------------


def render(source: str, **context) -> str:
    return Template("{% load times %}" + source).render(Context(context))


def test_a_time_is_a_time_element_in_utc_with_utc_in_its_title():
    kathmandu = dt.datetime(2020, 1, 19, 17, 50, 30, tzinfo=zoneinfo.ZoneInfo("Asia/Kathmandu"))
    assert render("{% time moment %}", moment=kathmandu) == (
        '<time datetime="2020-01-19T12:05:30Z" title="19 Jan 2020, 12:05:30 UTC" '
        'data-local="datetime">19 Jan 2020, 12:05 UTC</time>'
    )
    assert render('{% time moment "time" %}', moment=kathmandu).endswith(">12:05 UTC</time>")
    assert render('{% time moment "seconds" %}', moment=kathmandu).endswith(">12:05:30 UTC</time>")
    assert render("{% time moment %}", moment=None) == ""


def test_a_times_text_is_what_djangos_date_format_writes_for_any_moment():
    """The styles are written by hand (Django's `dateformat` was a tenth of a problem page's
    rendering): the same text as the format strings they stand for, on random moments."""
    formats = {"datetime": "j M Y, H:i", "date": "j M Y", "time": "H:i", "seconds": "H:i:s"}
    rng = random.Random(36)
    for _ in range(2000):
        day = dt.date(rng.randrange(1, 10_000), rng.randrange(1, 13), rng.randrange(1, 29))
        moment = dt.datetime.combine(day, dt.time(), dt.UTC) + dt.timedelta(
            seconds=rng.randrange(86_400)
        )
        title = date_format(moment, "j M Y, H:i:s")
        for style, django_format in formats.items():
            text = date_format(moment, django_format)
            shown = render(f'{{% time moment "{style}" %}}', moment=moment)
            assert shown.endswith(f'title="{title} UTC" data-local="{style}">{text} UTC</time>')


def test_every_page_shows_times_as_time_elements(mongodb, now, boards, problems, alice):
    solution_services.submission_record(programmer=alice, problem=problems[0], accepted=True)
    competition_services.competition_create(
        slug="cup", title="Cup", start=NOW, end=NOW + dt.timedelta(hours=2), problems=problems[:2]
    )
    client = signed_in(alice)
    utc_time = re.compile(r'<time datetime="[0-9T:-]+Z" title="[^"]+ UTC" data-local="\w+">')
    for path in ("/competitions/", "/competitions/cup/", "/submissions/", "/u/Alice/"):
        assert utc_time.search(client.get(path).text), path


# --- the competition clock, as the server writes it ------------------------------------------


def test_a_duration_reads_as_a_clock_and_days():
    assert duration_text(0) == "0:00:00"
    assert duration_text(3600 + 5 * 60 + 9) == "1:05:09"
    assert duration_text(86400 + 3 * 3600 + 4 * 60 + 5) == "1 day 3:04:05"
    assert duration_text(2 * 86400) == "2 days 0:00:00"


@pytest.fixture
def cup(mongodb, now, problems):
    """From 13:00 to 15:00 UTC; "now" is 12:00."""
    return competition_services.competition_create(
        slug="cup",
        title="Cup",
        start=NOW + dt.timedelta(hours=1),
        end=NOW + dt.timedelta(hours=3),
        problems=problems[:2],
    )


def clock_text(path: str) -> str:
    page = Client().get(path).text
    clock = re.search(r'<p class="clock (\w+)"[^>]*>(.*?)</p>', page, re.S)
    return clock.group(1) + ": " + re.sub(r"<[^>]+>", "", clock.group(2))


@pytest.mark.parametrize("path", ["/competitions/cup/", "/competitions/cup/standings/"])
def test_the_clock_says_starts_in_then_time_left_then_ended_without_javascript(cup, path):
    assert clock_text(path) == "upcoming: Starts in 1:00:00"
    with time_machine.travel(NOW + dt.timedelta(hours=1, minutes=36, seconds=15), tick=False):
        assert clock_text(path) == "running: Time left 1:23:45 · elapsed 0:36:15"
        assert clock_text(path + "?display=1") == "running: Time left 1:23:45 · elapsed 0:36:15"
    with time_machine.travel(NOW + dt.timedelta(hours=3), tick=False):
        assert clock_text(path) == "ended: Ended"


def test_the_clock_gives_its_script_the_span_and_the_servers_time(cup):
    page = Client().get("/competitions/cup/").text
    assert 'data-start="2020-01-19T13:00:00Z" data-end="2020-01-19T15:00:00Z"' in page
    assert 'data-now="2020-01-19T12:00:00Z"' in page
    assert '<time class="clock-left" datetime="PT3600S">1:00:00</time>' in page


# --- accessibility and the profile -----------------------------------------------------------


def test_every_page_starts_with_a_skip_link_to_the_content(mongodb, now, boards):
    page = Client().get("/leaderboard/").text
    body = page[page.index("<body>") :]
    assert body.split("\n")[1].strip() == (
        '<a class="skip-link" href="#content">Skip to content</a>'
    )
    assert '<main id="content" tabindex="-1"' in page


def test_a_programmer_with_no_history_sees_one_sentence_instead_of_empty_charts(
    mongodb, now, boards, charlie
):
    page = Client().get("/u/charlie/").text
    assert '<svg class="chart"' not in page
    assert page.count("No rank history yet") == 1

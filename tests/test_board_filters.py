"""Boards that answer what people ask: flags and organizations lead to the board filtered by
them, the filter bar picks a country or an organization with the same query parameters, and an
unknown country says so (on the page and through the API) instead of showing an empty board.
Alice (BD, BUET) and Bob (IN, no organization) solve problems."""

from __future__ import annotations

import datetime as dt
import html
import re

from django.test import Client

from tests.conftest import NOW
from tests.support.pages import ranks, row_html, solve


def test_a_rows_flag_and_organization_link_to_the_board_of_that_group(
    mongodb, now, boards, problems, alice, bob
):
    solve(alice, problems[0])
    solve(bob, problems[1], NOW - dt.timedelta(hours=1))
    page = Client().get("/leaderboard/").text
    alice_row = row_html(page, "Alice")
    flag = re.search(
        r'<a class="flag-link" href="([^"]+)" title="Rank within Bangladesh">', alice_row
    )
    assert flag and '<img class="flag"' in alice_row.split(flag[0], 1)[1][:80]
    org = re.search(r'<td class="org"><a href="([^"]+)"', alice_row)
    for link in (flag[1], org[1]):
        assert ranks(Client().get("/leaderboard/" + link.replace("&amp;", "&"))) == [
            (1, "Alice", 1)
        ]
    assert 'href="?country=IN"' in row_html(page, "bob")


def test_a_past_days_flag_links_to_that_days_board_of_the_country(
    mongodb, now, boards, problems, alice
):
    solve(alice, problems[0], NOW - dt.timedelta(days=1))
    yesterday = (NOW - dt.timedelta(days=1)).date().isoformat()
    page = Client().get(f"/leaderboard/?date={yesterday}").text
    assert f'href="?date={yesterday}&amp;country=BD"' in row_html(page, "Alice")


def test_the_filter_bar_picks_a_country_or_an_organization(
    mongodb, now, boards, problems, alice, bob
):
    solve(alice, problems[0])
    solve(bob, problems[1], NOW - dt.timedelta(hours=1))
    page = Client().get("/leaderboard/?display=1").text
    picker = re.search(
        r'<form method="get" class="picker" aria-label="Rank a country">.*?</form>', page, re.S
    )[0]
    assert '<select id="id_pick_country" name="country">' in picker
    assert '<option value="BD">Bangladesh</option>' in picker
    assert '<input type="hidden" name="display" value="1">' in picker  # kept, like the day
    # The organization picker's suggestions: what its script asks the API, once it is used
    # (a page nobody filters reads no organizations).
    asked = html.unescape(re.search(r'id="id_pick_org"[^>]*data-groups-url="([^"]+)"', page)[1])
    suggested = Client().get(asked, HTTP_ACCEPT="application/json").json()["entries"]
    assert [group["group"] for group in suggested] == ["BUET"]  # the organizations on the board
    # What the forms send is what the links send.
    assert ranks(Client().get("/leaderboard/", {"country": "IN", "display": "1"})) == [
        (1, "bob", 1)
    ]
    assert ranks(Client().get("/leaderboard/", {"org": "BUET"})) == [(1, "Alice", 1)]
    everybody = Client().get("/leaderboard/", {"country": ""})
    assert [handle for _, handle, _ in ranks(everybody)] == ["bob", "Alice"]
    # The chosen group stays chosen.
    chosen = Client().get("/leaderboard/?country=bd").text
    assert '<option value="BD" selected>Bangladesh</option>' in chosen


def test_an_unknown_country_says_so_instead_of_an_empty_board(mongodb, now, boards, alice):
    response = Client().get("/leaderboard/?country=XX")
    assert response.status_code == 400
    assert "No country XX" in response.text
    assert "Nobody is on this board" not in response.text
    answer = Client().get("/api/v1/boards/last-7-days?country=xx")
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "invalid_parameter" and "No country XX" in error["message"]
    standing = Client().get("/api/v1/boards/last-7-days/programmers/Alice?country=XX")
    assert standing.status_code == 400
    # A real country with nobody on the board is just empty.
    empty = Client().get("/leaderboard/?country=FR")
    assert empty.status_code == 200 and "Nobody is on this board from this group" in empty.text


def test_a_flag_is_made_once_a_country_and_language_and_named_in_the_pages_language():
    """The rows' flags are made once and kept (a problem page shows one a solver): each is the
    flag made afresh, in the language of the page that shows it."""
    from django.utils import translation
    from django.utils.html import format_html
    from django_countries import countries
    from django_countries.fields import Country

    from solutions.templatetags.boards import flag

    for language in ("en-us", "de", "en-us"):
        with translation.override(language):
            for code, _name in countries:
                country = Country(code=code)
                fresh = format_html(
                    '<img class="flag" src="{}" alt="{}" title="{}" width="16" height="11">',
                    country.flag,
                    country.code,
                    country.name,
                )
                assert flag(country) == fresh
    with translation.override("de"):
        assert 'title="Deutschland"' in flag(Country(code="DE"))
    assert flag(None) == "" and flag(Country(code="")) == ""

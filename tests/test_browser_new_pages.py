"""The newest pages in a real browser, at 1280 and 390 px wide: the board's score range ("how
many solved that or more?"), a problem's solvers a page at a time, the competitions list with
one competition of each kind, and the profile card offered on a profile. What a user would
notice: the page wider than the phone (a sideways scroll), a console error (a Content-Security-
Policy violation is one), page links too small to tap (44 px, the touch target size of WCAG
2.5.5), a card image cut off or not drawn, a Copy button that copies nothing.

The browser, the live server, the tabs and the site (Alice 3 solved, Bob 2, a crowd of 12 with
1 each, Staff) are those of tests/support/browser.py.
"""

from __future__ import annotations

import pytest

from competitions import services as competition_services
from solutions import services
from tests.conftest import make_programmer
from tests.support import browser as shared
from tests.support.browser import DESKTOP, PHONE, Tab, ago

browser = shared.browser
live_server_http = shared.live_server_http
new_tab = shared.new_tab
site = shared.site

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)
VIEWPORTS = [pytest.param(DESKTOP, id="1280"), pytest.param(PHONE, id="390")]
TAP_PX = 44  # the smallest target a finger hits reliably


def wider_than_the_window(tab: Tab) -> list[str]:
    """The first few elements that reach past the window's right edge, to name in a failure."""
    return tab.page.evaluate(
        """() => [...document.querySelectorAll("body *")]
            .filter(e => e.getBoundingClientRect().right > innerWidth + 1)
            .map(e => e.tagName + "." + e.className).slice(0, 5)"""
    )


def fits_and_says_nothing_wrong(tab: Tab) -> None:
    """No sideways scroll and no console error."""
    assert tab.horizontal_overflow() <= 0, wider_than_the_window(tab)
    assert tab.errors == [], tab.errors


def page_links_can_be_tapped(tab: Tab) -> None:
    links = tab.page.locator("nav.pagination a")
    assert links.count() >= 1
    for link in links.all():
        box = link.bounding_box()
        assert box["height"] >= TAP_PX and box["width"] >= TAP_PX, (link.inner_text(), box)


# --- the score range ---------------------------------------------------------------------------


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_score_range_is_asked_and_answered_in_a_sentence_inside_the_screen(
    new_tab, site, viewport
):
    tab = new_tab(viewport)
    assert tab.open("/leaderboard/?min=2").status == 200
    answer = tab.page.locator(".score-range-answer")
    assert answer.inner_text().startswith("2 programmers solved 2 or more in the last 7 days")
    box = answer.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
    fits_and_says_nothing_wrong(tab)
    field = tab.page.locator("#id_min")
    assert field.input_value() == "2"
    field.fill("3")
    tab.page.get_by_role("button", name="Count").click()
    tab.page.wait_for_load_state("load")
    assert "min=3" in tab.page.url
    assert (
        tab.page.locator(".score-range-answer")
        .inner_text()
        .startswith("1 programmer solved 3 or more")
    )
    tab.screenshot(f"score-range-{viewport['width']}")
    fits_and_says_nothing_wrong(tab)


# --- a problem's solvers -------------------------------------------------------------------------


def solvers_past_one_page(site) -> None:
    """37 more solvers of p1 (one import): with Alice, Bob and the crowd, 51, two pages of 50."""
    more = [make_programmer(f"late{k:02}") for k in range(37)]
    first = site["problems"][0]
    services.solves_import(solves=[(p, first, ago(30 - k / 2)) for k, p in enumerate(more)])


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_problems_solvers_go_to_a_second_page_by_links_a_finger_can_tap(new_tab, site, viewport):
    solvers_past_one_page(site)
    tab = new_tab(viewport)
    assert tab.open("/problems/p1/").status == 200
    fits_and_says_nothing_wrong(tab)
    if viewport is PHONE:
        page_links_can_be_tapped(tab)
    tab.page.locator("nav.pagination a[rel=next]").click()
    tab.page.wait_for_load_state("load")
    assert "page=2" in tab.page.url
    assert tab.page.locator("nav.pagination [aria-current=page]").inner_text() == "2"
    assert "late36" in tab.page.content()  # the last to solve, alone on the second page
    tab.screenshot(f"problem-solvers-page-2-{viewport['width']}")
    fits_and_says_nothing_wrong(tab)
    if viewport is PHONE:
        page_links_can_be_tapped(tab)


# --- the competitions list ---------------------------------------------------------------------


@pytest.fixture
def competitions_of_every_kind(site):
    """One running, one upcoming with registration and a long title, one past and final."""
    problems = site["problems"]
    running = competition_services.competition_create(
        slug="weekly-42", title="Weekly 42", start=ago(60), end=ago(-60), problems=problems[:2]
    )
    upcoming = competition_services.competition_create(
        slug="national-collegiate-2027",
        title="National Collegiate Programming Contest, Preliminary Round (Dhaka Site)",
        start=ago(-3 * 24 * 60),
        end=ago(-3 * 24 * 60 - 300),
        problems=problems[:3],
        registration_required=True,
    )
    past = competition_services.competition_create(
        slug="autumn-cup", title="Autumn Cup", start=ago(600), end=ago(480), problems=problems[:1]
    )
    competition_services.competition_archive(competition=past)
    return running, upcoming, past


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_competitions_list_shows_each_kind_inside_the_screen(
    new_tab, competitions_of_every_kind, viewport
):
    tab = new_tab(viewport)
    assert tab.open("/competitions/").status == 200
    for competition in competitions_of_every_kind:
        link = tab.page.get_by_role("link", name=competition.title, exact=True)
        assert link.is_visible()
        box = link.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], competition.slug
    assert tab.page.get_by_text("Registration", exact=True).is_visible()
    tab.screenshot(f"competitions-list-{viewport['width']}")
    fits_and_says_nothing_wrong(tab)


# --- the profile card ----------------------------------------------------------------------------


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_profile_card_is_drawn_inside_the_screen_and_its_markdown_copies(
    browser, live_server_http, site, viewport
):
    context = browser.new_context(viewport=viewport)
    try:
        context.grant_permissions(["clipboard-read", "clipboard-write"])
        tab = Tab(context, live_server_http.url)
        assert tab.open("/u/Alice/").status == 200
        tab.page.get_by_text("Profile card for a README").click()
        images = tab.page.locator("details.profile-card img")
        assert images.count() == 2
        for image in images.all():
            image.scroll_into_view_if_needed()
            drawn = image.evaluate("img => img.complete && img.naturalWidth > 0")
            assert drawn, image.get_attribute("src")
            box = image.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
            assert box["height"] * 3 == pytest.approx(box["width"], abs=2)  # not squashed
        markdown = tab.page.locator("#card-markdown")
        box = markdown.bounding_box()
        assert box["x"] + box["width"] <= viewport["width"]
        copy = tab.page.get_by_role("button", name="Copy")
        if viewport is PHONE:
            assert copy.bounding_box()["height"] >= TAP_PX
        copy.click()
        # The label changes once the clipboard's promise settles: waited for, not sampled.
        tab.page.get_by_role("button", name="Copied").wait_for(state="visible", timeout=5000)
        pasted = tab.page.evaluate("navigator.clipboard.readText()")
        assert pasted == markdown.input_value() and "/u/Alice/card.svg" in pasted
        tab.screenshot(f"profile-card-{viewport['width']}")
        fits_and_says_nothing_wrong(tab)
    finally:
        context.close()

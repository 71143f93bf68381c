"""What a viewer notices in a real browser, at 1280 and 390 px: a board left untouched stays live
while its tab is visible (slower only while hidden, and at once when shown again); a programmer
who comes onto the page from below glows like the others that moved, and each row shows one
change marker, explained in a legend; on a phone the pagination links are tall enough to tap,
the header fits one line behind a menu and the list of search matches stays inside the screen.

Time in the page runs on Playwright's clock where the test needs minutes to pass: the polls are
the page's own timers, run forward without waiting for them. The browser, the live server, the
tabs and the site (Alice 3 solved, Bob 2, a crowd of 12 with 1 each, Staff) are those of
tests/test_browser.py.
"""

from __future__ import annotations

import pytest

from solutions import services
from solutions.tokens import service_token_create
from tests.conftest import make_programmer
from tests.support import browser as shared
from tests.support.browser import DESKTOP, PHONE, Tab, ago, post_solve

browser = shared.browser
live_server_http = shared.live_server_http
new_tab = shared.new_tab
site = shared.site

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)
VIEWPORTS = [pytest.param(DESKTOP, id="1280"), pytest.param(PHONE, id="390")]
LIVE_MS = 3000  # the page's poll while its tab is visible (solutions/static/solutions/live.js)
HIDDEN_MS = 60000  # while it is hidden


def polls_of(tab: Tab) -> list[str]:
    """The live fragment's requests the page makes from now on."""
    seen: list[str] = []
    tab.page.on("request", lambda request: "/live/" in request.url and seen.append(request.url))
    return seen


def run_clock(tab: Tab, milliseconds: int, until=lambda: False, step: int = 250) -> bool:
    """Run the page's clock forward by `milliseconds` in steps, letting each poll's request
    finish in real time between them; stops early (True) once `until()` holds."""
    for _ in range(0, milliseconds, step):
        tab.page.clock.run_for(step)
        tab.page.wait_for_timeout(60)
        if until():
            return True
    tab.page.wait_for_timeout(300)
    return until()


def set_visibility(tab: Tab, state: str) -> None:
    """What the browser does when the tab is put in the background or brought back."""
    tab.page.evaluate(
        """state => {
            const read = {configurable: true, get: () => state};
            Object.defineProperty(document, "visibilityState", read);
            document.dispatchEvent(new Event("visibilitychange"));
        }""",
        state,
    )


# --- live boards that stay live --------------------------------------------------------------


def test_a_board_left_untouched_shows_a_new_solve_within_the_live_interval(
    new_tab, live_server_http, site
):
    _, token = service_token_create(name="judge")
    climber = site["crowd"][5]
    tab = new_tab()
    tab.page.clock.install()
    tab.open("/leaderboard/")
    polls = polls_of(tab)
    # Ten minutes on a wall: nobody moves the mouse, types or scrolls.
    tab.page.clock.fast_forward("10:00")
    tab.page.wait_for_timeout(500)
    for problem in ("p2", "p3", "p4", "p5"):
        post_solve(live_server_http, token, climber.handle, problem)

    glowing = tab.page.locator(f'table.board tbody tr:first-child.moved[data-key="{climber.pk}"]')
    assert run_clock(tab, LIVE_MS + 250, until=lambda: glowing.count() == 1), (
        f"no update within {LIVE_MS} ms of an untouched page ({len(polls)} polls)"
    )
    assert tab.errors == []


def test_a_hidden_board_polls_slowly_and_at_once_when_it_is_shown_again(
    new_tab, live_server_http, site
):
    tab = new_tab()
    tab.page.clock.install()
    tab.open("/leaderboard/")
    polls = polls_of(tab)
    run_clock(tab, 2 * LIVE_MS)
    assert len(polls) >= 2  # visible: the live rate

    set_visibility(tab, "hidden")
    run_clock(tab, LIVE_MS)  # a poll already waiting may still go out
    hidden_since = len(polls)
    run_clock(tab, 10 * LIVE_MS, step=1000)
    assert len(polls) == hidden_since  # hidden: nothing for half a minute

    set_visibility(tab, "visible")
    run_clock(tab, 250)
    assert len(polls) == hidden_since + 1  # shown again: at once
    assert tab.errors == []


# --- the arrival glows; one marker a row -----------------------------------------------------


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_programmer_coming_onto_the_page_from_below_glows_and_each_row_shows_one_marker(
    new_tab, live_server_http, site, viewport
):
    # Twelve more with one solve each, later than the crowd's: 26 on the board, one past page 1.
    late = [make_programmer(f"late{i:02}", country="NP") for i in range(12)]
    for k, programmer in enumerate(late):
        services.solve_record(
            programmer=programmer, problem=site["problems"][0], solved_at=ago(50 - k)
        )
    arrival = late[-1]
    _, token = service_token_create(name="judge")
    tab = new_tab(viewport)
    tab.open("/leaderboard/")
    page = tab.page
    assert page.locator(f'tr[data-key="{arrival.pk}"]').count() == 0  # on page 2

    for problem in ("p2", "p3", "p4", "p5"):
        post_solve(live_server_http, token, arrival.handle, problem)
    # From rank 26 to 1: the row glows although somebody (rank 25) left the page for it.
    page.locator(f'table.board tbody tr:first-child.moved[data-key="{arrival.pk}"]').wait_for(
        timeout=LIVE_MS + 2000
    )
    assert page.locator("tr.moved").count() == 1
    tab.screenshot(f"board-arrival-{viewport['width']}")

    # Everybody it passed shows where they were, and only that: no arrow beside "was".
    pushed = page.locator("td.rank[data-was]")
    assert pushed.count() >= 20
    for cell in pushed.all()[:5]:
        assert cell.locator(".move").count() == 0 or not cell.locator(".move").is_visible()
        marker = cell.evaluate("cell => getComputedStyle(cell, '::after').content")
        assert marker.startswith('" was ')
    # The rows nobody moved keep their one arrow since the previous day.
    alice_cell = page.locator(f'tr[data-key="{site["alice"].pk}"] td.rank')
    assert alice_cell.get_attribute("data-was") == "1"

    legend = page.locator("#legend")
    assert legend.is_visible()
    text = legend.inner_text()
    assert "since the previous day" in text and "glows" in text and "was 3" in text
    assert tab.errors == []


# --- phones --------------------------------------------------------------------------------


def crowd_past_one_page(site) -> None:
    """Twelve more with a solve each: 26 on the board, two pages of 25."""
    for k in range(12):
        programmer = make_programmer(f"more{k:02}")
        first = site["problems"][0]
        services.solve_record(programmer=programmer, problem=first, solved_at=ago(40 - k))


def test_on_a_phone_the_page_links_are_tall_enough_to_tap(new_tab, site):
    crowd_past_one_page(site)
    tab = new_tab(PHONE)
    tab.open("/leaderboard/")
    links = tab.page.locator("nav.pagination a")
    assert links.count() >= 2  # page 2 and "Next"
    for link in links.all():
        box = link.bounding_box()
        assert box["height"] >= 44 and box["width"] >= 44, (link.inner_text(), box)
    links.last.click()
    assert "page=2" in tab.page.url
    assert tab.horizontal_overflow() <= 0
    assert tab.errors == []


@pytest.mark.parametrize("signed_in", [False, True], ids=["visitor", "signed-in"])
def test_on_a_phone_the_header_is_one_line_with_its_links_behind_a_menu(new_tab, site, signed_in):
    tab = new_tab(PHONE, user=site["alice"].user if signed_in else None)
    tab.open("/leaderboard/")
    header = tab.page.locator(".site-header").bounding_box()
    brand = tab.page.locator(".site-header .brand").bounding_box()
    menu = tab.page.locator("details.menu > summary")
    assert menu.is_visible() and menu.bounding_box()["height"] >= 44
    assert header["height"] <= 64  # one line: the brand, the bell and the menu
    assert abs(menu.bounding_box()["y"] - brand["y"]) < 30
    problems = tab.page.get_by_role("link", name="Problems")
    assert not problems.is_visible()
    menu.click()
    assert problems.is_visible() and problems.bounding_box()["height"] >= 44
    account = tab.page.get_by_role("link", name="Account" if signed_in else "Log in")
    assert account.is_visible()
    tab.screenshot(f"header-menu-390-{'signed-in' if signed_in else 'visitor'}")
    problems.click()
    assert tab.page.url.endswith("/problems/")
    assert tab.horizontal_overflow() <= 0
    assert tab.errors == []


def test_on_a_wide_screen_the_header_shows_its_links_without_a_menu(new_tab, site):
    tab = new_tab(DESKTOP, user=site["alice"].user)
    tab.open("/leaderboard/")
    assert not tab.page.locator("details.menu > summary").is_visible()
    for name in ("Boards", "Problems", "Competitions", "Account", "My submissions"):
        assert tab.page.get_by_role("link", name=name, exact=True).is_visible()
    assert tab.page.locator(".site-header").bounding_box()["height"] <= 64


def test_on_a_phone_the_list_of_matches_stays_inside_the_screen(new_tab, site):
    make_programmer("coder_with_a_rather_long_handle")  # not on the board: says so, at length
    tab = new_tab(PHONE)
    tab.open("/leaderboard/?q=coder")
    table = tab.page.locator("table.matches")
    assert table.locator("tbody tr").count() == 13
    box = table.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    for cell in table.locator("td").all()[-3:]:
        cell_box = cell.bounding_box()
        assert cell_box["x"] + cell_box["width"] <= PHONE["width"]
    tab.screenshot("search-matches-390")
    wide = tab.page.evaluate(
        """() => [...document.querySelectorAll("body *")]
            .filter(e => e.getBoundingClientRect().right > innerWidth + 1)
            .map(e => e.tagName + "." + e.className).slice(0, 5)"""
    )
    assert tab.horizontal_overflow() <= 0, wide
    assert tab.errors == []


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_account_page_opens_at_the_top(new_tab, site, viewport):
    tab = new_tab(viewport, user=site["alice"].user)
    tab.open("/account/")
    tab.page.wait_for_timeout(200)
    assert tab.page.evaluate("window.scrollY") == 0
    assert tab.page.evaluate("document.activeElement === document.body")
    assert tab.errors == []

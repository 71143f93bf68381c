"""The site in a real browser: Debian's Chromium, driven by Playwright, against a live server.

A newcomer signs up, answers wrong then right and finds their own row highlighted; an open board
updates by itself after a judge posts a solve through the API; frozen standings show pending
cells to the public and results to staff; and every main page loads with no console error (a
Content-Security-Policy violation is one) and no horizontal scroll on a 390 px phone. Each main
page is saved as a screenshot under var/artifacts/screenshots/ for a reviewer to look at.

Only Debian's Chromium is used (`apt-get install chromium`, never a browser Playwright
downloads). Without it these tests skip with the reason; under CI=true they fail instead.
Alice (BD, BUET) leads the board, Bob (IN) follows; a crowd of others fills it; Staff is staff.
"""

from __future__ import annotations

import re

import pytest

from solutions.models import Programmer
from solutions.tokens import service_token_create
from tests.support import browser as shared
from tests.support.browser import DESKTOP, PHONE, Tab, post_solve

PASSWORD = "correct horse battery"
LIVE_UPDATE_SECONDS = 5

# Rows committed where the live server's thread sees them; the boards the migrations seed come
# back after each flush.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

browser = shared.browser
live_server_http = shared.live_server_http
new_tab = shared.new_tab
site = shared.site
frozen_contest = shared.frozen_contest


def board_handles(tab: Tab) -> list[str]:
    return tab.page.locator("table.board tbody td.who a:not(.flag-link)").all_inner_texts()


# --- a newcomer ------------------------------------------------------------------------------


def test_a_newcomer_signs_up_answers_wrong_then_right_and_sees_their_row_highlighted(
    new_tab, live_server_http, site
):
    tab = new_tab()
    tab.open("/accounts/signup/")
    tab.page.get_by_role("button", name="Sign up").click()
    assert tab.page.locator(".field.invalid").count() >= 3  # every field says what is wrong
    tab.screenshot("signup-errors")
    # The refused form answers 400, which Chromium logs as a failed load: expected here.
    assert tab.errors == [
        "Failed to load resource: the server responded with a status of 400 (Bad Request)"
    ]
    tab.errors.clear()

    tab.page.fill("#id_username", "Dana_42")
    tab.page.fill("#id_password1", "a long and unusual passphrase")
    tab.page.fill("#id_password2", "a long and unusual passphrase")
    tab.page.select_option("#id_country", label="Bangladesh")
    assert tab.page.locator(".flag-select img.flag").get_attribute("src").endswith("/bd.gif")
    tab.page.fill("#id_organization", "BUET")
    tab.screenshot("signup-filled")
    tab.page.get_by_role("button", name="Sign up").click()
    tab.page.wait_for_url(re.compile(r"/problems/$"))
    assert "Welcome, Dana_42!" in tab.page.inner_text(".messages")
    assert Programmer.objects.get(handle="Dana_42").country.name == "Bangladesh"
    tab.screenshot("problems")

    tab.open("/leaderboard/")
    before = board_handles(tab)
    assert "Dana_42" not in before

    tab.open("/problems/p1/")
    tab.page.fill("input[name=answer]", "wrong")
    tab.page.get_by_role("button", name="Submit").click()
    assert "Wrong answer" in tab.page.inner_text(".messages")
    tab.page.fill("input[name=answer]", "7")
    tab.page.get_by_role("button", name="Submit").click()
    assert "Accepted" in tab.page.inner_text(".messages")
    tab.screenshot("problem")

    tab.open("/leaderboard/")
    after = board_handles(tab)
    assert len(after) == len(before) + 1 and "Dana_42" in after
    mine = tab.page.locator("tr.me")
    assert "Dana_42" in mine.inner_text()
    highlight = mine.locator("td").first.evaluate("cell => getComputedStyle(cell).backgroundColor")
    assert highlight == "rgb(255, 248, 197)"  # --me
    assert tab.page.locator("tr.me img.flag").get_attribute("alt") == "BD"
    tab.screenshot("board-signed-in")

    tab.open("/submissions/")
    assert tab.page.locator("table.submissions").inner_text().count("Problem 1") == 2
    assert tab.errors == []


# --- live boards -----------------------------------------------------------------------------


def test_an_open_board_updates_by_itself_after_a_solve_posted_through_the_api(
    new_tab, live_server_http, site
):
    _, token = service_token_create(name="judge")
    climber = site["crowd"][5]
    tab = new_tab()
    tab.open("/leaderboard/")
    row = tab.page.locator(f'tr[data-key="{climber.pk}"]')
    assert row.get_attribute("data-rank") != "1"

    for problem in ("p2", "p3", "p4", "p5"):
        assert post_solve(live_server_http, token, climber.handle, problem)["counted"] is True

    # The page polls every 3 s while in use: the row moves to the top and glows. (A poll may land
    # between the solves, with the climber tied for first and listed second: wait for the top.)
    moved = tab.page.locator(f'table.board tbody tr:first-child.moved[data-key="{climber.pk}"]')
    moved.wait_for(timeout=LIVE_UPDATE_SECONDS * 1000)
    assert moved.get_attribute("data-rank") == "1"
    assert board_handles(tab)[0] == climber.handle
    tab.screenshot("board-live-update")
    assert tab.errors == []


def test_display_mode_is_full_width_with_large_type_and_keeps_polling(
    new_tab, live_server_http, site
):
    _, token = service_token_create(name="judge")
    tab = new_tab(viewport={"width": 1920, "height": 1080})
    tab.open("/leaderboard/?display=1")
    assert tab.page.locator("html.display").count() == 1
    assert not tab.page.locator(".site-header").is_visible()
    table_width = tab.page.locator("table.board").bounding_box()["width"]
    assert table_width > 1700  # the board uses the screen
    post_solve(live_server_http, token, "bob", "p3")
    post_solve(live_server_http, token, "bob", "p4")
    tab.page.locator(f'tr.moved[data-key="{site["bob"].pk}"]').wait_for(timeout=5000)
    tab.screenshot("board-display-mode")
    assert tab.errors == []


# --- competitions ----------------------------------------------------------------------------


def test_frozen_standings_show_pending_cells_to_the_public_and_results_to_staff(
    new_tab, frozen_contest, site
):
    public = new_tab()
    public.open("/competitions/winter-cup/standings/")
    pending = public.page.locator("td.cell.pending")
    assert pending.count() == 2
    assert pending.first.inner_text().split() == ["?", "2", "tries"]
    assert "Frozen at" in public.page.inner_text("#standings")
    public.screenshot("standings-frozen-public")

    staff = new_tab(user=site["staff"])
    staff.open("/competitions/winter-cup/standings/")
    assert staff.page.locator("td.cell.pending").count() == 0
    bob = staff.page.locator(f'tr[data-key="{site["bob"].pk}"]')
    assert bob.get_attribute("data-rank") == "1"
    assert bob.locator("td.cell.solved").count() == 2
    staff.screenshot("standings-frozen-staff")
    assert public.errors == [] and staff.errors == []


# --- every page ------------------------------------------------------------------------------


MAIN_PAGES = [
    ("board", "/leaderboard/"),
    ("board-all-time", "/leaderboard/all-time/"),
    ("board-country", "/leaderboard/?country=BD"),
    ("board-search", "/leaderboard/?q=bob"),
    ("board-countries", "/leaderboard/?view=countries"),
    ("board-organizations", "/leaderboard/?view=organizations"),
    ("profile", "/u/Alice/"),
    ("problems", "/problems/"),
    ("problem", "/problems/p1/"),
    ("submissions", "/submissions/"),
    ("competitions", "/competitions/"),
    ("competition", "/competitions/winter-cup/"),
    ("standings", "/competitions/winter-cup/standings/"),
    ("notifications", "/notifications/"),
    ("alert-settings", "/account/alerts/"),
]
SIGNED_OUT_PAGES = [("login", "/accounts/login/"), ("signup", "/accounts/signup/")]


def test_every_page_has_no_console_errors_and_no_horizontal_scroll_on_a_phone(
    new_tab, frozen_contest, site
):
    for viewport, suffix in ((PHONE, "-390"), (DESKTOP, "")):
        tabs = [
            (new_tab(viewport, user=site["alice"].user), MAIN_PAGES),
            (new_tab(viewport), SIGNED_OUT_PAGES),
        ]
        for tab, pages in tabs:
            for name, path in pages:
                response = tab.open(path)
                assert response.status == 200, path
                tab.screenshot(f"{name}{suffix}")
                assert tab.errors == [], (path, tab.errors)
                if viewport is PHONE:
                    assert tab.horizontal_overflow() <= 0, path


def test_the_admin_works_under_the_content_security_policy(new_tab, live_server_http, site):
    tab = new_tab(user=site["staff"])
    for path in (
        "/admin/",
        "/admin/solutions/programmer/",
        f"/admin/solutions/programmer/{site['alice'].pk}/change/",
    ):
        assert tab.open(path).status == 200
        assert tab.errors == [], (path, tab.errors)
    tab.screenshot("admin-programmer")


def test_a_three_digit_rank_with_an_arrow_and_two_tries_stay_on_one_line_on_a_phone(
    new_tab, frozen_contest, site
):
    tab = new_tab(PHONE)
    one_line = """([selector, html]) => {
        const cell = document.querySelector(selector);
        const before = cell.getBoundingClientRect().height;
        cell.innerHTML = html;
        return cell.getBoundingClientRect().height <= before + 1;
    }"""
    tab.open("/leaderboard/")
    assert tab.page.evaluate(one_line, ["td.rank", '102 <span class="move down">↓14</span>'])
    tab.open("/competitions/winter-cup/standings/")
    tried = "<strong>100</strong><small>12 tries</small>"
    assert tab.page.evaluate(one_line, ["td.cell.solved", tried])

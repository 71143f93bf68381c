"""The pages' details in a real browser, at 1280 and 390 px: the standings scroll sideways inside
their box with the rank and the handle kept in view; a board's table starts on a phone's first
screen (its filters fold into one control); the competition clock ticks; times show in the
viewer's own time zone; a skip link comes first and every control shows where the focus is;
rank badges are readable; chart text stays at least 11 px; and a live update makes only the rows
whose score changed glow.

The browser, the live server, the tabs and the site (Alice 3 solved, Bob 2, a crowd of 12 with
1 each, Staff) are those of tests/test_browser.py, imported from there.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo

import pytest

from solutions import services
from solutions.models import Programmer
from solutions.tokens import service_token_create
from tests.support import browser as shared
from tests.support.browser import DESKTOP, PHONE, Tab, ago, post_solve

# The fixtures of tests/test_browser.py, found by pytest by these names.
browser = shared.browser
live_server_http = shared.live_server_http
new_tab = shared.new_tab
site = shared.site
frozen_contest = shared.frozen_contest

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)
VIEWPORTS = [pytest.param(DESKTOP, id="1280"), pytest.param(PHONE, id="390")]
ABOUT_AN_HOUR = r"(0:5\d:\d\d|1:00:00)"  # the frozen contest ends an hour after it is made


def until(tab: Tab, expression: str, test, seconds: float = 6) -> bool:
    """Whether `expression`, evaluated in the page every 100 ms, passes `test` within `seconds`.
    (Playwright's wait_for_function evaluates a string, which the site's CSP forbids.)"""
    for _ in range(int(seconds * 10)):
        if test(tab.page.evaluate(expression)):
            return True
        tab.page.wait_for_timeout(100)
    return False


# WCAG's contrast ratio of a text's colour on its background, computed in the page.
CONTRAST = """element => {
    const channels = value => value.match(/[\\d.]+/g).slice(0, 3).map(Number);
    const luminance = rgb => {
        const [r, g, b] = rgb.map(c => c / 255).map(
            c => (c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4)));
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    let back = element;
    while (back && getComputedStyle(back).backgroundColor === "rgba(0, 0, 0, 0)") {
        back = back.parentElement;
    }
    const text = luminance(channels(getComputedStyle(element).color));
    const ground = luminance(
        channels(back ? getComputedStyle(back).backgroundColor : "rgb(255, 255, 255)"));
    return (Math.max(text, ground) + 0.05) / (Math.min(text, ground) + 0.05);
}"""


# --- phones: the standings and the board -----------------------------------------------------


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_standings_scroll_inside_their_box_with_rank_and_handle_kept_in_view(
    new_tab, frozen_contest, site, viewport
):
    tab = new_tab(viewport)
    tab.open("/competitions/winter-cup/standings/")
    assert tab.horizontal_overflow() <= 0  # the page itself never scrolls sideways
    box = tab.page.locator(".standings-scroll")
    overflow = box.evaluate("box => box.scrollWidth - box.clientWidth")
    hint = tab.page.locator(".scroll-hint")
    if viewport is PHONE:
        assert overflow > 0
        assert hint.is_visible() and "sideways" in hint.inner_text()
    else:
        assert overflow <= 0 and not hint.is_visible()

    first_row = tab.page.locator("table.standings tbody tr").first
    rank, who = first_row.locator("td.rank"), first_row.locator("td.who")
    before = (rank.bounding_box()["x"], who.bounding_box()["x"])
    box.evaluate("box => { box.scrollLeft = box.scrollWidth; }")
    tab.page.wait_for_timeout(100)
    after = (rank.bounding_box()["x"], who.bounding_box()["x"])
    assert after == pytest.approx(before, abs=1)  # sticky
    last_column = tab.page.locator("table.standings th.cell").last.bounding_box()
    view = box.bounding_box()
    who_right = who.bounding_box()["x"] + who.bounding_box()["width"]
    assert who_right <= last_column["x"]  # reachable, not under the sticky columns
    assert last_column["x"] + last_column["width"] <= view["x"] + view["width"] + 1
    tab.screenshot(f"standings-scrolled-{viewport['width']}")
    assert tab.errors == []


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_board_table_starts_on_the_first_screen_and_the_filters_fold_on_a_phone(
    new_tab, site, viewport
):
    tab = new_tab(viewport, user=site["alice"].user)
    tab.open("/leaderboard/")
    table = tab.page.locator("table.board").bounding_box()
    rows = tab.page.locator("table.board tbody tr")
    third_row = rows.nth(2).bounding_box()
    assert third_row["y"] + third_row["height"] <= viewport["height"]  # rows, not just a header
    search = tab.page.locator(".filterbar input[type=search]")
    summary = tab.page.locator("details.filters > summary")
    if viewport is PHONE:
        assert table["y"] < 400
        assert not search.is_visible() and summary.is_visible()
        assert "Last 7 days" in summary.inner_text()
        summary.click()
        assert search.is_visible()
        tab.screenshot("board-filters-open-390")
    else:
        assert search.is_visible() and not summary.is_visible()
    assert tab.horizontal_overflow() <= 0
    assert tab.errors == []


def test_without_javascript_a_phone_still_shows_the_filters_the_clock_and_utc_times(
    browser, live_server_http, frozen_contest, site
):
    context = browser.new_context(viewport=PHONE, java_script_enabled=False)
    try:
        tab = Tab(context, live_server_http.url)
        tab.open("/leaderboard/")
        assert tab.page.locator(".filterbar input[type=search]").is_visible()
        tab.open("/competitions/winter-cup/")
        clock = tab.page.locator(".clock").inner_text()
        assert re.fullmatch(rf"Time left {ABOUT_AN_HOUR} · elapsed 2:0\d:\d\d", clock), clock
        assert tab.page.locator(".subtitle time").first.inner_text().endswith(" UTC")
    finally:
        context.close()


# --- the clock and local times ---------------------------------------------------------------


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_clock_shows_time_left_and_ticks_on_both_tabs_and_in_display_mode(
    new_tab, frozen_contest, site, viewport
):
    tab = new_tab(viewport)
    for path in ("", "standings/", "standings/?display=1"):
        tab.open(f"/competitions/winter-cup/{path}")
        clock = tab.page.locator(".clock")
        assert clock.is_visible()
        first = clock.inner_text()
        assert re.fullmatch(rf"Time left {ABOUT_AN_HOUR} · elapsed 2:0\d:\d\d", first), first
        ticked = until(tab, "document.querySelector('.clock').innerText", first.__ne__)
        assert ticked
    tab.screenshot(f"standings-display-clock-{viewport['width']}")
    assert tab.errors == []


def test_an_upcoming_competition_counts_down_to_its_start(new_tab, site):
    from competitions import services as competition_services

    competition_services.competition_create(
        slug="spring-cup",
        title="Spring Cup",
        start=ago(-90),
        end=ago(-150),
        problems=site["problems"][:2],
    )
    competition_services.competition_create(
        slug="dawn-cup", title="Dawn Cup", start=ago(-8 / 60), end=ago(-60), problems=[]
    )
    tab = new_tab(PHONE)
    tab.open("/competitions/spring-cup/standings/")
    clock = tab.page.locator(".clock.upcoming")
    assert re.fullmatch(r"Starts in (1:29:\d\d|1:30:00)", clock.inner_text())

    # Seconds to go: the clock turns to the time left and offers a reload for the problems.
    tab.open("/competitions/dawn-cup/")
    assert re.fullmatch(r"Starts in 0:00:0\d", tab.page.locator(".clock").inner_text())
    running = "clock running".__eq__
    assert until(tab, "document.querySelector('.clock').className", running, seconds=12)
    assert tab.page.locator(".clock a", has_text="Reload the page").is_visible()
    assert tab.errors == []


def test_times_show_in_the_viewers_time_zone_with_utc_in_the_title(
    browser, live_server_http, frozen_contest, site
):
    context = browser.new_context(viewport=DESKTOP, timezone_id="Asia/Kathmandu", locale="en-GB")
    try:
        tab = Tab(context, live_server_http.url)
        tab.open("/competitions/")
        start = tab.page.locator("table.competitions time").first
        moment = dt.datetime.fromisoformat(start.get_attribute("datetime").replace("Z", "+00:00"))
        local = moment.astimezone(zoneinfo.ZoneInfo("Asia/Kathmandu"))
        assert local.strftime("%H:%M") in start.inner_text()
        assert "UTC" not in start.inner_text()
        assert start.get_attribute("title") == moment.strftime("%-d %b %Y, %H:%M:%S UTC")
        assert tab.errors == []
    finally:
        context.close()


# --- accessibility and badges ----------------------------------------------------------------


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_skip_link_comes_first_and_every_control_shows_its_focus(new_tab, site, viewport):
    tab = new_tab(viewport, user=site["alice"].user)
    tab.open("/leaderboard/")
    page = tab.page
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    skip = page.locator(".skip-link").bounding_box()
    assert skip["y"] >= 0 and skip["x"] >= 0  # on screen while focused
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "content"

    page.keyboard.press("Shift+Tab")  # back into the header, then through every control
    seen = set()
    for _ in range(30):
        page.keyboard.press("Tab")
        ring = page.evaluate(
            """() => {
                const element = document.activeElement;
                const style = getComputedStyle(element);
                return [element.outerHTML.slice(0, 60), style.outlineStyle,
                        parseFloat(style.outlineWidth)];
            }"""
        )
        if ring[0].startswith("<body"):
            break  # past the last control
        seen.add(ring[0])
        assert ring[1] != "none" and ring[2] >= 2, ring
    assert len(seen) >= 15
    tab.screenshot(f"board-focus-{viewport['width']}")


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_badges_read_at_least_four_and_a_half_to_one(new_tab, site, viewport):
    # 14 on the board: Alice alone at the top is 1 of 14, the top 10%.
    tab = new_tab(viewport, user=site["alice"].user)
    tab.open("/leaderboard/")
    badge = tab.page.locator(".tier.top10").first
    assert badge.inner_text() == "10%"
    assert badge.evaluate(CONTRAST) >= 4.5
    assert tab.page.locator("a.top10").first.evaluate(CONTRAST) >= 4.5  # on Alice's own row
    assert tab.page.locator(".tiers .top10").evaluate(CONTRAST) >= 4.5


# --- charts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_chart_text_stays_at_least_11_px_and_a_newcomer_sees_one_sentence(new_tab, site, viewport):
    tab = new_tab(viewport)
    tab.open("/u/Alice/")
    sizes = tab.page.evaluate(
        """() => [...document.querySelectorAll("svg.chart")].map(svg => {
            const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
            return parseFloat(svg.getAttribute("font-size")) * scale;
        })"""
    )
    assert len(sizes) >= 3 and min(sizes) >= 11, sizes
    tab.screenshot(f"profile-charts-{viewport['width']}")

    Programmer.objects.create(handle="newbie")
    tab.open("/u/newbie/")
    assert tab.page.locator("svg.chart").count() == 0
    assert tab.page.locator(".no-charts").is_visible()
    assert tab.errors == []


# --- the live glow ---------------------------------------------------------------------------


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_live_update_glows_only_the_rows_whose_score_changed(
    new_tab, live_server_http, site, viewport
):
    alice, bob = site["alice"], site["bob"]
    # Bob ties Alice at 3 (Alice reached it first, so she is listed first; both rank 1).
    services.solve_record(programmer=bob, problem=site["problems"][2], solved_at=ago(70))
    _, token = service_token_create(name="judge")
    tab = new_tab(viewport)
    tab.open("/leaderboard/")
    page = tab.page
    assert page.locator(f'tr[data-key="{alice.pk}"]').get_attribute("data-rank") == "1"

    # One solve makes Bob the only leader: his row glows; Alice's only moves down, which her
    # rank cell says ("was 1") without a glow; nobody else's row changes at all.
    post_solve(live_server_http, token, "bob", "p4")
    page.locator(f'tr.moved[data-key="{bob.pk}"]').wait_for(timeout=5000)
    assert page.locator("tr.moved").count() == 1
    alice_row = page.locator(f'tr[data-key="{alice.pk}"]')
    assert alice_row.get_attribute("data-rank") == "2"
    assert alice_row.locator("td.rank").get_attribute("data-was") == "1"
    assert "was 1" in alice_row.locator("td.rank").evaluate(
        "cell => getComputedStyle(cell, '::after').content"
    )
    assert page.locator("td.rank[data-was]").count() == 1
    tab.screenshot(f"board-live-glow-{viewport['width']}")

    # A first solve puts a newcomer on the board: nobody left the page, so the new row glows.
    assert until(tab, "document.querySelector('tr.moved, td[data-was]')", lambda found: not found)
    post_solve(live_server_http, token, "newbie", "p1")
    newbie = Programmer.objects.get(handle="newbie")
    page.locator(f'tr.moved[data-key="{newbie.pk}"]').wait_for(timeout=5000)
    assert page.locator("tr.moved").count() == 1
    assert tab.errors == []


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_profile_shows_the_year_as_an_accessible_heatmap_without_sideways_page_scroll(
    new_tab, site, viewport
):
    tab = new_tab(viewport)
    tab.open("/u/Alice/")
    heatmap = tab.page.locator("svg.heatmap")
    assert heatmap.is_visible() and heatmap.get_attribute("role") == "img"
    # Its name and description are what a screen reader says for it.
    names = tab.page.evaluate(
        """() => document.querySelector("svg.heatmap").getAttribute("aria-labelledby")
            .split(" ").map(id => document.getElementById(id).textContent)"""
    )
    assert len(names) == 2 and names[1].startswith("3 solves on ")
    # A cell a day, titled with its date and count (Alice's 3 solves, 90 minutes ago and since,
    # may fall on two days just after midnight).
    cells = tab.page.locator("svg.heatmap rect title").all_text_contents()
    counts = [int(match[1]) for cell in cells if (match := re.search(r": (\d+) solves?$", cell))]
    assert len(cells) >= 365 and sum(counts) == 3
    assert "Current streak" in tab.page.locator(".year-stats").inner_text()
    # Wider than a phone, it scrolls inside its own box, reachable from the keyboard.
    scroller = tab.page.locator(".heatmap-scroll")
    assert scroller.get_attribute("tabindex") == "0"
    tab.page.locator("details.year-table > summary").click()
    rows = tab.page.locator("details.year-table table tbody tr").all_inner_texts()
    assert sum(int(row.split()[-1]) for row in rows) == 3
    assert tab.horizontal_overflow() <= 0
    assert tab.errors == []

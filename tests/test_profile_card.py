"""The profile card, `GET /u/<handle>/card.svg` (issue 38, part 4): an SVG image for READMEs.

It is well-formed XML with no script, every user string escaped; it says the programmer's handle,
flag, rank and score on the default board, current streak and a year of weekly solves; it comes in
a light and a dark theme (an unknown theme is a 400 that names the good ones); it is public and
cached; a hidden, banned or unknown handle is a 404. Chromium draws it at its declared size.
Alice (BD) solved on the last three days and leads; Bob (IN) solved once; Charlie nothing.
"""

from __future__ import annotations

import base64
import datetime as dt
import os
import xml.etree.ElementTree as ET

import pytest
from django.test import Client

from solutions import cards, services
from solutions.models import Board
from tests.conftest import NOW
from tests.support.chromium import CHROMIUM, CHROMIUM_FLAGS, require_chromium

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def solved(mongodb, now, boards, problems, alice, bob, charlie):
    """Alice solved one problem on each of the last three days; Bob one today."""
    for days_ago in (2, 1, 0):
        services.solve_record(
            programmer=alice,
            problem=problems[days_ago],
            solved_at=NOW - dt.timedelta(days=days_ago),
        )
    services.solve_record(programmer=bob, problem=problems[5], solved_at=NOW)


def card_of(handle: str, query: str = ""):
    return Client().get(f"/u/{handle}/card.svg{query}")


def texts(svg: bytes) -> list[str]:
    """Every text the card draws, parsed as XML (a malformed card fails here)."""
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return ["".join(text.itertext()) for text in root.iter(f"{SVG}text")]


def test_the_card_shows_handle_rank_score_streak_and_the_year(solved):
    response = card_of("Alice")

    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml; charset=utf-8"
    drawn = texts(response.content)
    assert "Alice" in drawn
    assert "#1" in drawn
    assert "of 2 · Last 7 days · score 3" in drawn
    assert "Streak 3 days" in drawn
    assert "3 solves in the last 52 weeks" in drawn
    root = ET.fromstring(response.content)
    assert root.get("width") == "420" and root.get("height") == "140"
    flag = root.find(f"{SVG}image")
    assert flag is not None and flag.get("href").startswith("data:image/gif;base64,")
    weeks = [rect for rect in root.iter(f"{SVG}rect") if rect.find(f"{SVG}title") is not None]
    assert len(weeks) == 52
    assert weeks[-1].find(f"{SVG}title").text == "Week to 2020-01-19: 3 solves"
    assert weeks[0].find(f"{SVG}title").text == "Week to 2019-01-27: 0 solves"


def test_a_programmer_off_the_board_reads_unranked(solved):
    drawn = texts(card_of("charlie").content)

    assert "unranked" in drawn
    assert "Streak 0 days" in drawn
    assert ET.fromstring(card_of("charlie").content).find(f"{SVG}image") is None  # no country


def test_the_card_has_no_script_and_escapes_what_users_and_staff_wrote(solved):
    Board.objects.filter(slug="last-7-days").update(title='Top <script>"x"</script> & co')

    response = card_of("Alice")

    assert b"<script" not in response.content.lower()
    assert 'of 2 · Top <script>"x"</script> & co · score 3' in texts(response.content)
    assert not list(ET.fromstring(response.content).iter(f"{SVG}script"))


def test_a_hostile_handle_cannot_break_out_of_the_card():
    """Handles are letters, digits, _ and - today; the card escapes them all the same."""
    card = cards.Card(
        handle="<script>alert(1)</script>&\"'",
        country_code="",
        country_name="",
        board_title="Côte d'Ivoire & <b>",
        rank=None,
        score=0,
        total=0,
        current_streak=0,
        weeks=[0] * cards.WEEKS,
        today=dt.date(2020, 1, 19),
    )

    svg = cards.card_svg(card, "dark").encode()

    assert b"<script" not in svg
    drawn = texts(svg)
    assert "<script>alert(1)</script>&\"'" in drawn
    assert "Côte d'Ivoire & <b> · score 0" in drawn


@pytest.mark.parametrize(
    ("theme", "background"), [("", "#ffffff"), ("light", "#ffffff"), ("dark", "#0d1117")]
)
def test_the_theme_sets_the_colours(solved, theme, background):
    response = card_of("Alice", f"?theme={theme}")

    assert response.status_code == 200
    frame = ET.fromstring(response.content).find(f"{SVG}rect")
    assert frame.get("fill") == background


def test_an_unknown_theme_is_a_400_that_names_the_themes(solved):
    response = card_of("Alice", "?theme=neon")

    assert response.status_code == 400
    assert response.content.decode() == "Unknown theme 'neon': use light or dark."


def test_hidden_banned_and_unknown_handles_are_404(solved, alice, bob):
    services.programmer_set_visibility(programmer=alice, hidden=True)
    services.programmer_set_visibility(programmer=bob, banned=True)

    assert card_of("Alice").status_code == 404
    assert card_of("bob").status_code == 404
    assert card_of("nobody").status_code == 404
    assert card_of("charlie").status_code == 200


def test_the_card_is_public_and_cached(solved, alice, problems):
    first = card_of("Alice")
    assert first["Cache-Control"] == "public, max-age=300"
    assert "Cookie" not in first.get("Vary", "")

    services.solve_record(programmer=alice, problem=problems[7], solved_at=NOW)

    assert card_of("Alice").content == first.content  # the site's cache answered
    assert "of 2 · Last 7 days · score 4" in texts(card_of("Alice", "?theme=dark").content)


def test_the_profile_offers_the_card_as_markdown(solved):
    page = Client().get("/u/Alice/").content.decode()

    assert 'src="/u/Alice/card.svg"' in page
    assert (
        'value="[![Alice on the leaderboard](http://testserver/u/Alice/card.svg)]'
        '(http://testserver/u/Alice/)"'
    ) in page


# --- drawn by Chromium -------------------------------------------------------------------------

# Counts the pixels of the drawn card that are not its background, its size, and two samples:
# the frame's inside and the flag's green corner (its red disc is in the middle).
DRAWN = """async (source) => {
  const img = new Image();
  img.src = source;
  await img.decode();
  const canvas = document.createElement("canvas");
  canvas.width = img.naturalWidth;
  canvas.height = img.naturalHeight;
  const context = canvas.getContext("2d");
  context.drawImage(img, 0, 0);
  const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
  const at = (x, y) => {
    const i = (y * canvas.width + x) * 4;
    return Array.from(data.slice(i, i + 3));
  };
  const background = at(8, 70);
  let inked = 0;
  for (let i = 0; i < data.length; i += 4) {
    if (Math.abs(data[i] - background[0]) + Math.abs(data[i + 1] - background[1]) +
        Math.abs(data[i + 2] - background[2]) > 60) inked++;
  }
  return {width: img.naturalWidth, height: img.naturalHeight, background, flag: at(18, 19), inked};
}"""


@pytest.fixture(scope="module")
def chromium():
    """Chromium for this module. Playwright's sync API keeps an event loop in this thread, so
    Django's guard against ORM calls from async code is lifted meanwhile (as in test_browser)."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            yield browser
            browser.close()
    finally:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.mark.parametrize(
    ("theme", "background"), [("light", [255, 255, 255]), ("dark", [13, 17, 23])]
)
def test_chromium_draws_the_card_at_its_size_in_its_theme(solved, chromium, theme, background):
    svg = card_of("Alice", f"?theme={theme}").content
    page = chromium.new_page()
    try:
        drawn = page.evaluate(DRAWN, "data:image/svg+xml;base64," + base64.b64encode(svg).decode())
    finally:
        page.close()

    assert (drawn["width"], drawn["height"]) == (420, 140)
    assert drawn["background"] == background
    red, green, blue = drawn["flag"]
    assert green > red + 30 and green > blue + 30  # Bangladesh's green, whatever the theme
    assert drawn["inked"] > 2_000  # text, the flag and the year's bars

"""The profile card: a small SVG image of a programmer for READMEs and forum signatures
(`GET /u/<handle>/card.svg`). A pure function of a `Card`: no I/O but the flag's bytes.

The card is shown where the site has no say: inside an ``<img>`` on GitHub (through its image
proxy), a forum, a chat. So it carries everything itself: no script (an ``<img>`` never runs
one, and a card opened on its own must not either), no external reference (an SVG shown as an
image loads none: the flag is embedded as a data URI), system fonts, every colour written out
(no ``currentColor``: there is no page around it), and every string that came from a user
escaped for XML. Two themes, for light and dark pages.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
from dataclasses import dataclass

from django.contrib.staticfiles import finders
from django.utils.html import escape

WIDTH, HEIGHT = 420, 140
WEEKS = 52  # the year strip: one bar a week, the last one ending today
STRIP_LEFT, STRIP_BOTTOM, STRIP_HEIGHT, BAR_PITCH, BAR_WIDTH = 16, 124, 28, 7.5, 5.5


@dataclass(frozen=True)
class Theme:
    background: str
    border: str
    ink: str
    muted: str
    empty: str  # a week with no solves
    bar: str


THEMES = {
    "light": Theme("#ffffff", "#d0d7de", "#1f2328", "#59636e", "#ebedf0", "#2da44e"),
    "dark": Theme("#0d1117", "#30363d", "#e6edf3", "#9198a1", "#21262d", "#3fb950"),
}
DEFAULT_THEME = "light"


@dataclass(frozen=True)
class Card:
    """What a card says about a programmer (see `selectors.programmer_card`)."""

    handle: str
    country_code: str  # "" when they gave none
    country_name: str
    board_title: str  # the default board ("" when the site has none)
    rank: int | None  # None: not on it today
    score: int
    total: int  # programmers on the board today
    current_streak: int
    weeks: list[int]  # solves a week, oldest first, WEEKS of them ending today
    today: dt.date


def weeks_of(days: dict[int, int], today: int) -> list[int]:
    """The solves of each of the WEEKS weeks ending on `today` (epoch days), oldest first."""
    first = today - WEEKS * 7 + 1
    weeks = [0] * WEEKS
    for day, solves in days.items():
        if first <= day <= today:
            weeks[(day - first) // 7] += solves
    return weeks


@functools.cache
def _flag_data_uri(code: str) -> str:
    """The country's flag (django-countries' GIF) as a data URI, or "" when there is none."""
    path = finders.find(f"flags/{code.lower()}.gif")
    if not path:
        return ""
    with open(path, "rb") as flag:
        return "data:image/gif;base64," + base64.b64encode(flag.read()).decode("ascii")


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _standing_lines(card: Card) -> tuple[str, str]:
    """The big figure and the line under it: the rank on the default board, or why none."""
    if not card.board_title:
        return "–", "No board yet"
    if card.rank is None:
        return "unranked", f"{card.board_title} · score {card.score:,}"
    return f"#{card.rank:,}", f"of {card.total:,} · {card.board_title} · score {card.score:,}"


def _strip(card: Card, theme: Theme) -> list[str]:
    """The year strip: a bar a week, its height the week's solves against the busiest week's
    (a week without any is a flat grey bar, so the strip always shows a whole year)."""
    busiest = max(card.weeks, default=0)
    bars = []
    for index, solves in enumerate(card.weeks):
        height = 2 if solves == 0 else max(4, round(STRIP_HEIGHT * solves / busiest))
        ends = card.today - dt.timedelta(days=7 * (WEEKS - 1 - index))
        bars.append(
            f'<rect x="{STRIP_LEFT + index * BAR_PITCH:g}" y="{STRIP_BOTTOM - height}" '
            f'width="{BAR_WIDTH:g}" height="{height}" rx="1" '
            f'fill="{theme.bar if solves else theme.empty}">'
            f"<title>Week to {ends.isoformat()}: {_plural(solves, 'solve')}</title></rect>"
        )
    return bars


def card_svg(card: Card, theme_name: str = DEFAULT_THEME) -> str:
    """The card as an SVG document (`theme_name` one of THEMES)."""
    theme = THEMES[theme_name]
    handle = escape(card.handle)
    figure, standing = _standing_lines(card)
    streak = _plural(card.current_streak, "day")
    solved = sum(card.weeks)
    summary = (
        f"{card.handle}: {figure} {standing}; current streak {streak}; "
        f"{_plural(solved, 'solve')} in the last {WEEKS} weeks."
    )
    flag = _flag_image(card)
    handle_x = 48 if flag else 16  # right of the flag
    parts = [
        *([flag] if flag else []),
        f'<text x="{handle_x}" y="32" font-size="20" font-weight="600" fill="{theme.ink}">'
        f"{handle}</text>",
        f'<text x="{WIDTH - 16}" y="32" font-size="20" font-weight="600" text-anchor="end" '
        f'fill="{theme.ink}">{escape(figure)}</text>',
        f'<text x="{WIDTH - 16}" y="52" font-size="12" text-anchor="end" fill="{theme.muted}">'
        f"{escape(standing)}</text>",
        f'<text x="16" y="52" font-size="12" fill="{theme.muted}">Streak {streak}</text>',
        f'<text x="16" y="82" font-size="11" fill="{theme.muted}">'
        f"{_plural(solved, 'solve')} in the last {WEEKS} weeks</text>",
        *_strip(card, theme),
    ]
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-labelledby="card-title" '
        'font-family="-apple-system, BlinkMacSystemFont, Segoe UI, Helvetica, Arial, sans-serif">'
        f'<title id="card-title">{escape(summary)}</title>'
        f'<rect x="0.5" y="0.5" width="{WIDTH - 1}" height="{HEIGHT - 1}" rx="8" '
        f'fill="{theme.background}" stroke="{theme.border}"/>' + "".join(parts) + "</svg>\n"
    )


def _flag_image(card: Card) -> str:
    """The flag of the programmer's country, its name as its title ("" without a country)."""
    flag = _flag_data_uri(card.country_code) if card.country_code else ""
    if not flag:
        return ""
    return (
        f'<image x="16" y="17" width="24" height="16" href="{flag}" '
        f'preserveAspectRatio="none"><title>{escape(card.country_name)}</title></image>'
    )

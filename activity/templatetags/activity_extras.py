"""Template tags through which activity adds its parts to the pages of `solutions` (which never
imports activity): `{% load activity_extras %}`, then

- `{% profile_charts profile as charts %}`: rank history and forecast charts of each board;
  `{% charts_empty charts as no_charts %}`: whether none of them has anything to draw (a newcomer:
  the page says so in one sentence instead of empty frames);
- `{% year_heatmap year as heatmap %}`: the heatmap of a programmer's year of solves
  (`solutions.selectors.Year`, as the profile has it);
- `{% followers_count programmer as followers %}`: how many follow the programmer;
- `{% is_following programmer as following %}`: whether the viewer follows them (for the
  follow button, `activity/_follow_button.html`);
- `{% move_arrow row %}`: a board row's arrow, places moved since the previous day (a tag, not
  an included template: a board's rows show one a row).

The ETags of those pages cover the same values (see `activity.pages.page_part`).
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from solutions.models import Programmer
from solutions.selectors import Profile, Year

from .. import charts, selectors

register = template.Library()


@register.simple_tag
def profile_charts(profile: Profile) -> list[selectors.BoardCharts]:
    return selectors.profile_charts(profile=profile)


@register.simple_tag
def charts_empty(charts: list[selectors.BoardCharts]) -> bool:
    return not any(item.rank or item.forecast for item in charts)


@register.simple_tag
def year_heatmap(year: Year) -> SafeString:
    return charts.year_heatmap(
        year.dated(),
        first=year.first_date,
        last=year.last_date,
        chart_id="year-heatmap",
        title=f"{year.handle}’s solves, {year.first_date:%-d %b %Y} to {year.last_date:%-d %b %Y}",
    )


@register.simple_tag
def followers_count(programmer: Programmer) -> int:
    return selectors.followers_count(programmer=programmer)


@register.simple_tag(takes_context=True)
def is_following(context: template.Context, programmer: Programmer) -> bool:
    user = context.get("user")
    return user is not None and selectors.is_following(user=user, programmer=programmer)


_ARROWS = {  # direction: (the arrow, its title), {n}: the places moved
    "new": ("new", "Not on the previous day's board"),
    "up": ("↑{n}", "Up {n} place{s} since the previous day"),
    "down": ("↓{n}", "Down {n} place{s} since the previous day"),
    "same": ("–", "Same place as the previous day"),
}


@register.simple_tag
def move_arrow(row: selectors.MovedRow) -> str:
    """A board row's arrow (`selectors.MovedRow`), or nothing where there is nothing to compare."""
    direction = getattr(row, "direction", "")
    if direction not in _ARROWS:
        return ""
    arrow, title = _ARROWS[direction]
    n, s = row.places, "" if row.places == 1 else "s"
    return format_html(
        '<span class="move {}" title="{}">{}</span>',
        direction,
        title.format(n=n, s=s),
        arrow.format(n=n),
    )

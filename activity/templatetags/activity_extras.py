"""Template tags through which activity adds its parts to the pages of `solutions` (which never
imports activity): `{% load activity_extras %}`, then

- `{% profile_charts programmer as charts %}`: rank history and forecast charts of each board;
- `{% followers_count programmer as followers %}`: how many follow the programmer;
- `{% is_following programmer as following %}`: whether the viewer follows them (for the
  follow button, `activity/_follow_button.html`).

The ETags of those pages cover the same values (see `activity.pages.page_part`).
"""

from __future__ import annotations

from django import template

from solutions.models import Programmer

from .. import selectors

register = template.Library()


@register.simple_tag
def profile_charts(programmer: Programmer) -> list[selectors.BoardCharts]:
    return selectors.profile_charts(programmer=programmer)


@register.simple_tag
def followers_count(programmer: Programmer) -> int:
    return selectors.followers_count(programmer=programmer)


@register.simple_tag(takes_context=True)
def is_following(context: template.Context, programmer: Programmer) -> bool:
    user = context.get("user")
    return user is not None and selectors.is_following(user=user, programmer=programmer)

"""The links to a list shown a page at a time (`solutions/_pagination.html`): the one place that
says which page numbers are linked."""

from __future__ import annotations

from collections.abc import Iterator

from django import template
from django.core.paginator import Paginator

register = template.Library()


@register.simple_tag
def page_links(page: int, pages: int) -> Iterator[int | str]:
    """The page numbers linked from page `page` of `pages` (at least 1): the first and the last,
    two either side of the page, and "…" for the numbers between (Django's elided range). A page
    past the last is linked as if it were the last."""
    return Paginator(range(pages), 1).get_elided_page_range(
        min(max(page, 1), pages), on_each_side=2, on_ends=1
    )

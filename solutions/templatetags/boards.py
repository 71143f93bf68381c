"""Template helpers of the board pages: who is on each row (flag, organisation, rank tier) and
the problem titles of a submissions list (each one SQL query for the whole list), and a
country's flag."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django import template
from django.utils import translation
from django.utils.html import format_html
from django_countries.fields import Country

from solutions.models import Problem, Programmer

register = template.Library()

# The rank tiers, best first: (name, share of the board). A programmer is in the top 1% when
# the programmers with their score or a better one, times 100, are at most the programmers on the
# board; in the top 10% likewise with 10. A tie counts whole: three tied first of 216 are 3 of
# 216, over 1%. The board page states the rule under the table.
TIERS = (("top1", 100), ("top10", 10))


def rank_tier(at_or_above: int | None, total: int | None) -> str:
    """ "top1", "top10" or "" for a programmer whom `at_or_above` programmers (themselves
    included) equal or beat, on a board of `total` programmers."""
    if not at_or_above or not total:
        return ""
    for name, share in TIERS:
        if at_or_above * share <= total:
            return name
    return ""


@dataclass(frozen=True)
class Line:
    """A board row with the programmer behind it (None when they are gone) and their tier."""

    row: Any
    programmer: Programmer | None
    tier: str

    @property
    def country(self):
        return self.programmer.country if self.programmer else None

    @property
    def organization(self) -> str:
        return self.programmer.organization if self.programmer else ""


@register.simple_tag
def board_lines(
    rows: Sequence, total: int | None = None, people: Mapping[int, Programmer] | None = None
) -> list[Line]:
    """`{% board_lines rows total people as lines %}`: the rows with their programmers, read in
    one query unless given (`people`: a board page's, read once for all it shows)."""
    if people is None:
        people = Programmer.objects.in_bulk({row.programmer_id for row in rows})
    return [
        Line(row, people.get(row.programmer_id), rank_tier(row.at_or_above, total)) for row in rows
    ]


@register.simple_tag
def with_problem_titles(submissions: Iterable[dict]) -> list[dict]:
    """`{% with_problem_titles submissions as submissions %}`: each submission with the title of
    its problem (`title`; the slug when the problem is gone)."""
    submissions = list(submissions)
    slugs = {submission["problem"] for submission in submissions}
    titles = dict(Problem.objects.filter(slug__in=slugs).values_list("slug", "title"))
    return [
        {**submission, "title": titles.get(submission["problem"], submission["problem"])}
        for submission in submissions
    ]


@register.simple_tag
def country_of(code: str) -> Country:
    """`{% country_of "BD" as country %}`: the country of a code, for its flag and name."""
    return Country(code=(code or "").upper())


@register.simple_tag
def flag(country: Country | None) -> str:
    """`{% flag country %}`: the country's flag, or nothing, on every page that shows one. A tag,
    not an included template: a board's rows show one a row, and an include costs a row about a
    third of its rendering."""
    if not country:
        return ""
    return _flag_html(country.code, translation.get_language())


@functools.lru_cache(maxsize=1024)
def _flag_html(code: str, language: str | None) -> str:
    """A country's flag as the page's language names it, made once: a problem page shows a flag
    a solver, and making each (the name looked up and translated, the flag's address built) was
    a fifth of its rendering and 3.6% of the web workers' time on contest day."""
    country = Country(code=code)
    return format_html(
        '<img class="flag" src="{}" alt="{}" title="{}" width="16" height="11">',
        country.flag,
        country.code,
        country.name,
    )

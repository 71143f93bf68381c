"""How the pages show a moment and a contest clock, defined once: `{% load times %}`, then

- `{% time moment "datetime" %}`: a `<time>` element whose text is the moment in UTC ("25 Nov
  2026, 14:05 UTC"), readable as it is without JavaScript; `static/site.js` rewrites the text in
  the viewer's own time zone and leaves UTC in its title. Styles: "datetime", "date", "time",
  "seconds".
- `{{ span|span_words }}`: a length of time in words ("5 hours", "2 hours 30 minutes", "3 days").
- `{% clock start end %}`: "Starts in 2:05:00", "Time left 1:23:45 · elapsed 0:36:15" or
  "Ended", as of the request; `static/site.js` ticks it every second (the same format).

Neither knows what is timed (competitions use them; `solutions` imports nothing above it).
"""

from __future__ import annotations

import datetime as dt

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()

# Each style as the server writes it (in UTC): "25 Nov 2026, 14:05", "25 Nov 2026", "14:05",
# "14:05:09". Written with f-strings: the problem pages show one per solver, and Django's
# `dateformat` took a tenth of their rendering on contest day. English month names, as the
# site's every word.
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _date_text(utc: dt.datetime) -> str:
    return f"{utc.day} {MONTHS[utc.month - 1]} {utc.year:04d}"


STYLES = {
    "datetime": lambda utc: f"{_date_text(utc)}, {utc:%H:%M}",
    "date": _date_text,
    "time": lambda utc: f"{utc:%H:%M}",
    "seconds": lambda utc: f"{utc:%H:%M:%S}",
}


def as_utc(moment: dt.datetime) -> dt.datetime:
    """The moment in UTC (a naive datetime is taken as UTC, as the site stores them)."""
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, dt.UTC)
    return moment.astimezone(dt.UTC)


def iso_utc(moment: dt.datetime) -> str:
    """ "2026-11-25T14:05:00Z": what `<time datetime>` and the clock's script read."""
    return as_utc(moment).isoformat(timespec="seconds").replace("+00:00", "Z")


@register.simple_tag(name="time")
def time_element(moment: dt.datetime | None, style: str = "datetime") -> SafeString | str:
    """`<time datetime="…Z" title="… UTC" data-local="style">… UTC</time>` (nothing for None)."""
    if moment is None:
        return ""
    utc = as_utc(moment)
    return format_html(
        '<time datetime="{}" title="{} UTC" data-local="{}">{} UTC</time>',
        iso_utc(utc),
        f"{_date_text(utc)}, {utc:%H:%M:%S}",
        style,
        STYLES[style](utc),
    )


def duration_text(seconds: float) -> str:
    """ "1:05:09" under a day, "2 days 3:04:05" past it (site.js writes the same)."""
    seconds = max(int(seconds), 0)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    clock = f"{hours}:{minutes:02}:{seconds:02}"
    if days:
        return f"{days} day{'s' if days != 1 else ''} {clock}"
    return clock


@register.filter
def span_words(span: dt.timedelta) -> str:
    """ "5 hours", "1 hour 30 minutes", "2 days 3 hours", "45 minutes": a contest's length."""
    minutes = max(int(span.total_seconds() // 60), 0)
    days, rest = divmod(minutes, 1440)
    hours, minutes = divmod(rest, 60)
    parts = [(days, "day"), (hours, "hour"), (minutes, "minute")]
    words = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in parts if n]
    return " ".join(words) or "0 minutes"


def duration_iso(seconds: float) -> str:
    """An ISO 8601 duration ("PT5409S") for a `<time datetime>` holding a span."""
    return f"PT{max(int(seconds), 0)}S"


@register.inclusion_tag("solutions/_clock.html")
def clock(start: dt.datetime, end: dt.datetime) -> dict:
    """The clock of a span of time as of now: before, during or after it."""
    now = timezone.now()
    context = {"start": iso_utc(start), "end": iso_utc(end), "now": iso_utc(now)}
    if now < start:
        left = (start - now).total_seconds()
        return context | {
            "state": "upcoming",
            "left": duration_text(left),
            "left_iso": duration_iso(left),
        }
    if now < end:
        left, gone = (end - now).total_seconds(), (now - start).total_seconds()
        return context | {
            "state": "running",
            "left": duration_text(left),
            "left_iso": duration_iso(left),
            "elapsed": duration_text(gone),
            "elapsed_iso": duration_iso(gone),
        }
    return context | {"state": "ended"}

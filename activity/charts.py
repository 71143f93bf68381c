"""Server-rendered SVG charts for profiles: rank over time (a line, rank 1 at the top) and the
forecast (bars). Pure functions of their points: no I/O, no script, no external library.

Each chart is one ``<svg role="img">`` with a title and a description for screen readers, axes
with labelled ticks, and a ``<title>`` on every point or bar (the browser shows it on hover).
A chart with nothing to draw is empty (the page says so in words instead of an empty frame).

The drawing is about as wide as the chart is on a page (a phone's 360 px, a desktop column's
400), so its text keeps about its own size: FONT_SIZE units stay at least 11 px on a 390 px
phone (tests/test_browser_ui.py measures it).
"""

from __future__ import annotations

import datetime as dt
import math

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT = 400, 220
FONT_SIZE = 13
LEFT, RIGHT, TOP, BOTTOM = 52, 22, 14, 40
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
MAX_X_LABELS = 5  # "25 Nov" labels a 13-unit font can hold side by side
MAX_BAR_VALUES = 10  # bars labelled with their score, when there are no more
INK, MUTED, GRID, ACCENT = "currentColor", "#6b7280", "#e5e7eb", "#2563eb"


def nice_step(span: float, count: int = 5) -> int:
    """An integer tick step (1, 2 or 5 times a power of ten) giving closest to `count` ticks."""
    power = 10 ** max(math.floor(math.log10(max(span / count, 1))), 0)
    steps = [m * power for m in (1, 2, 5, 10)]
    return min(steps, key=lambda step: abs(span / step - count))


def ticks(low: int, high: int, count: int = 5) -> list[int]:
    """Integer ticks from `low` to `high`, both ends included."""
    if high <= low:
        return [low]
    step = nice_step(high - low, count)
    inner = range((low // step + 1) * step, high, step)
    values = [low, *(v for v in inner if v - low > step / 2 and high - v > step / 2), high]
    return sorted(set(values))


def _x(index: int, count: int) -> float:
    if count <= 1:
        return LEFT + PLOT_W / 2
    return LEFT + PLOT_W * index / (count - 1)


def labelled(count: int) -> list[int]:
    """Which of `count` x positions get a label: evenly spaced, always the last one (today),
    never two so close that they overlap."""
    every = max(1, math.ceil(count / MAX_X_LABELS))
    indexes = list(range(0, count, every))
    if indexes and indexes[-1] != count - 1:
        if count - 1 - indexes[-1] < every * 0.6:
            indexes[-1] = count - 1
        else:
            indexes.append(count - 1)
    return indexes


def _frame(chart_id: str, title: str, description: str, body: list[str], y_label: str) -> str:
    return "".join(
        [
            f'<svg class="chart" id="{escape(chart_id)}" viewBox="0 0 {WIDTH} {HEIGHT}" '
            f'width="100%" role="img" aria-labelledby="{escape(chart_id)}-t {escape(chart_id)}-d"'
            ' xmlns="http://www.w3.org/2000/svg" font-family="system-ui, sans-serif" '
            f'font-size="{FONT_SIZE}">',
            f'<title id="{escape(chart_id)}-t">{escape(title)}</title>',
            f'<desc id="{escape(chart_id)}-d">{escape(description)}</desc>',
            *body,
            f'<text x="14" y="{TOP + PLOT_H / 2:.1f}" fill="{MUTED}" text-anchor="middle" '
            f'transform="rotate(-90 14 {TOP + PLOT_H / 2:.1f})">{escape(y_label)}</text>',
            f'<line x1="{LEFT}" y1="{TOP + PLOT_H}" x2="{LEFT + PLOT_W}" y2="{TOP + PLOT_H}" '
            f'stroke="{MUTED}"/>',
            f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + PLOT_H}" stroke="{MUTED}"/>',
            "</svg>",
        ]
    )


def _y_axis(values: list[int], to_y) -> list[str]:
    parts = []
    for value in values:
        y = to_y(value)
        parts.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + PLOT_W}" y2="{y:.1f}" stroke="{GRID}"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" fill="{INK}">{value}</text>'
        )
    return parts


def _x_axis(labels: list[str], to_x) -> list[str]:
    parts = []
    for index in labelled(len(labels)):
        label, x = labels[index], to_x(index)
        parts.append(
            f'<line x1="{x:.1f}" y1="{TOP + PLOT_H}" x2="{x:.1f}" y2="{TOP + PLOT_H + 4}" '
            f'stroke="{MUTED}"/><text x="{x:.1f}" y="{TOP + PLOT_H + 18}" text-anchor="middle" '
            f'fill="{INK}">{escape(label)}</text>'
        )
    return parts


def _date_label(date: dt.date) -> str:
    return f"{date.day} {date:%b}"


def rank_chart(
    points: list[tuple[dt.date, int | None]], *, chart_id: str, title: str
) -> SafeString:
    """Rank per day, rank 1 at the top; days without a rank break the line."""
    ranks = [rank for _, rank in points if rank is not None]
    if not ranks:
        return mark_safe("")
    worst = max(max(ranks), 2)

    def to_y(rank: float) -> float:
        return TOP + PLOT_H * (rank - 1) / (worst - 1)

    def to_x(index: int) -> float:
        return _x(index, len(points))

    body = _y_axis(ticks(1, worst), to_y)
    body += _x_axis([_date_label(date) for date, _ in points], to_x)
    body += _rank_lines(points, to_x, to_y)
    body += _rank_dots(points, to_x, to_y)
    description = _rank_description(points, ranks)
    return mark_safe(_frame(chart_id, title, description, body, "Rank"))


def _rank_lines(points: list[tuple[dt.date, int | None]], to_x, to_y) -> list[str]:
    """One polyline per run of days with a rank; a lone day gets only its dot."""
    segments, current = [], []
    for index, (_, rank) in enumerate(points):
        if rank is None:
            if current:
                segments.append(current)
            current = []
        else:
            current.append(f"{to_x(index):.1f},{to_y(rank):.1f}")
    if current:
        segments.append(current)
    return [
        f'<polyline points="{" ".join(segment)}" fill="none" stroke="{ACCENT}" stroke-width="2"/>'
        for segment in segments
        if len(segment) > 1
    ]


def _rank_dots(points: list[tuple[dt.date, int | None]], to_x, to_y) -> list[str]:
    return [
        f'<circle cx="{to_x(index):.1f}" cy="{to_y(rank):.1f}" r="3" fill="{ACCENT}">'
        f"<title>{escape(date.isoformat())}: rank {rank}</title></circle>"
        for index, (date, rank) in enumerate(points)
        if rank is not None
    ]


def _rank_description(points: list[tuple[dt.date, int | None]], ranks: list[int]) -> str:
    first_date, first_rank = next((d, r) for d, r in points if r is not None)
    last_date, last_rank = next((d, r) for d, r in reversed(points) if r is not None)
    return (
        f"Rank from {first_date.isoformat()} (#{first_rank}) to {last_date.isoformat()} "
        f"(#{last_rank}); best #{min(ranks)}, worst #{max(ranks)}."
    )


def forecast_chart(points: list[tuple[dt.date, int]], *, chart_id: str, title: str) -> SafeString:
    """Score per coming day as bars, today first, each bar labelled with its score (nothing when
    not on the board today: every coming day is 0 too)."""
    if not points or not points[0][1]:
        return mark_safe("")
    top = max(max(score for _, score in points), 1)
    slot = PLOT_W / len(points)
    bar = max(min(slot * 0.7, 40), 2)

    def to_y(score: float) -> float:
        return TOP + PLOT_H * (1 - score / top)

    def to_x(index: int) -> float:
        return LEFT + slot * (index + 0.5)

    labels = ["Today" if i == 0 else _date_label(date) for i, (date, _) in enumerate(points)]
    body = _y_axis(ticks(0, top), to_y)
    body += _x_axis(labels, to_x)
    show_values = len(points) <= MAX_BAR_VALUES
    for index, (date, score) in enumerate(points):
        x, y = to_x(index), to_y(score)
        fill = ACCENT if index == 0 else "#93c5fd"
        body.append(
            f'<rect x="{x - bar / 2:.1f}" y="{y:.1f}" width="{bar:.1f}" '
            f'height="{TOP + PLOT_H - y:.1f}" fill="{fill}">'
            f"<title>{escape(date.isoformat())}: score {score}</title></rect>"
        )
        if show_values:
            body.append(
                f'<text x="{x:.1f}" y="{y - 4:.1f}" text-anchor="middle" fill="{INK}">'
                f"{score}</text>"
            )
    zero = next((date for date, score in points[1:] if score == 0), None)
    description = f"Score today {points[0][1]}; on {points[-1][0].isoformat()} {points[-1][1]}" + (
        f"; off the board from {zero.isoformat()}." if zero else "."
    )
    return mark_safe(_frame(chart_id, title, description, body, "Score"))


# --- the year heatmap ------------------------------------------------------------------------

# A heatmap cell per day: weeks as columns (Monday on top, as calendar weeks start on Monday),
# days as rows. It is drawn at its natural size (PITCH units a day = px) and scrolls inside its
# own box on a phone instead of shrinking its text below 11 px (see `.heatmap-scroll`).
CELL, PITCH = 11, 14
HEAT_LEFT, HEAT_TOP, HEAT_FONT = 32, 18, 11
# The colour of each level and the counts it stands for: (fewest solves, legend label, fill).
HEAT_LEVELS = [
    (0, "0", "#ebedf0"),
    (1, "1", "#9be9a8"),
    (2, "2", "#40c463"),
    (3, "3–4", "#30a14e"),
    (5, "5+", "#216e39"),
]
WEEKDAY_LABELS = {0: "Mon", 2: "Wed", 4: "Fri"}


def heat_level(count: int) -> int:
    """The colour level (index of HEAT_LEVELS) of a day with `count` solves."""
    return max(i for i, (least, _, _) in enumerate(HEAT_LEVELS) if count >= least)


def _solves_label(count: int) -> str:
    return f"{count} solve{'' if count == 1 else 's'}"


def year_heatmap(
    days: dict[dt.date, int], *, first: dt.date, last: dt.date, chart_id: str, title: str
) -> SafeString:
    """Every day from `first` to `last` as a cell coloured by its solves (`days`: the days
    with solves), each with its date and count as its title; the month names above, the
    weekdays on the left and the colour scale's legend below."""
    start = first - dt.timedelta(days=first.weekday())  # the Monday of the first column
    weeks = (last - start).days // 7 + 1
    width = HEAT_LEFT + weeks * PITCH + 4
    grid_bottom = HEAT_TOP + 7 * PITCH
    height = grid_bottom + 24
    body = _heat_months(first, last, start)
    body += [
        f'<text x="{HEAT_LEFT - 6}" y="{HEAT_TOP + row * PITCH + CELL - 1}" text-anchor="end" '
        f'fill="{MUTED}">{label}</text>'
        for row, label in WEEKDAY_LABELS.items()
    ]
    body += _heat_cells(days, first, last, start)
    body += _heat_legend(width, grid_bottom + 8)
    solved, active = sum(days.values()), sum(1 for n in days.values() if n)
    description = (
        f"{_solves_label(solved)} on {active} day{'' if active == 1 else 's'} from "
        f"{first.isoformat()} to {last.isoformat()}; darker cells are days with more solves."
    )
    return mark_safe(
        f'<svg class="heatmap" id="{escape(chart_id)}" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" '
        f'aria-labelledby="{escape(chart_id)}-t {escape(chart_id)}-d" '
        'xmlns="http://www.w3.org/2000/svg" font-family="system-ui, sans-serif" '
        f'font-size="{HEAT_FONT}">'
        f'<title id="{escape(chart_id)}-t">{escape(title)}</title>'
        f'<desc id="{escape(chart_id)}-d">{escape(description)}</desc>' + "".join(body) + "</svg>"
    )


def _heat_cells(
    days: dict[dt.date, int], first: dt.date, last: dt.date, start: dt.date
) -> list[str]:
    """A cell a day from `first` to `last`, a column a week from the Monday `start`, coloured by
    the day's solves and titled with its date and count."""
    cells = []
    day = first
    while day <= last:
        offset = (day - start).days
        count = days.get(day, 0)
        cells.append(
            f'<rect x="{HEAT_LEFT + offset // 7 * PITCH}" y="{HEAT_TOP + offset % 7 * PITCH}" '
            f'width="{CELL}" height="{CELL}" rx="2" fill="{HEAT_LEVELS[heat_level(count)][2]}">'
            f"<title>{day.isoformat()}: {_solves_label(count)}</title></rect>"
        )
        day += dt.timedelta(days=1)
    return cells


def _heat_months(first: dt.date, last: dt.date, start: dt.date) -> list[str]:
    """A month's name above the column holding its first day (the first column names the
    month it starts in, unless that name would run into the next one)."""
    labels = []
    month = first.replace(day=1)
    while month <= last:
        column = (max(month, first) - start).days // 7
        labels.append((column, f"{month:%b}"))
        month = (month + dt.timedelta(days=32)).replace(day=1)
    if len(labels) > 1 and labels[1][0] - labels[0][0] < 3:
        labels.pop(0)
    return [
        f'<text x="{HEAT_LEFT + column * PITCH}" y="{HEAT_TOP - 6}" fill="{INK}">{name}</text>'
        for column, name in labels
    ]


def _heat_legend(width: int, y: int) -> list[str]:
    """The colour scale, right-aligned under the grid: "Solves a day" and each level's cell
    with the counts it stands for."""
    slot = 34
    x = width - 4 - slot * len(HEAT_LEVELS)
    parts = [
        f'<text x="{x - 6}" y="{y + CELL - 1}" text-anchor="end" fill="{MUTED}">Solves a day</text>'
    ]
    for index, (_, label, fill) in enumerate(HEAT_LEVELS):
        left = x + index * slot
        parts.append(
            f'<rect x="{left}" y="{y}" width="{CELL}" height="{CELL}" rx="2" fill="{fill}"/>'
            f'<text x="{left + CELL + 3}" y="{y + CELL - 1}" fill="{INK}">{label}</text>'
        )
    return parts

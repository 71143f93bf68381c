"""The board pages as a reader sees them (rows, ranks, one row's HTML), a signed-in client, and
solves and crowds to fill the boards with."""

from __future__ import annotations

import datetime as dt
from html.parser import HTMLParser

from django.test import Client

from solutions import services
from solutions.models import Problem, Programmer
from tests.conftest import NOW


class BoardRows(HTMLParser):
    """The rows of the board table as a reader sees them: rank, handle, score, highlighted."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[int, str, int, bool]] = []
        self._in_board = False
        self._cells: list[str] | None = None
        self._highlighted = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attrs = dict(attrs)
        if tag == "table" and "board" in (attrs.get("class") or ""):
            self._in_board = True
        elif self._in_board and tag == "tr":
            self._cells, self._highlighted = [], "me" in (attrs.get("class") or "").split()
        elif self._cells is not None and tag == "td":
            self._cells.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_board = False
        elif tag == "tr" and self._cells:
            # Rank (and arrow), programmer (and tier badge), organization, score.
            rank, handle, score = (self._cells[i].split()[0] for i in (0, 1, -1))
            self.rows.append((int(rank), handle, int(score), self._highlighted))
        if tag == "tr":
            self._cells = None

    def handle_data(self, data: str) -> None:
        if self._cells:
            self._cells[-1] += data


def rows(response) -> list[tuple[int, str, int, bool]]:
    assert response.status_code == 200, response.content[:500]
    parser = BoardRows()
    parser.feed(response.content.decode())
    return parser.rows


def ranks(response) -> list[tuple[int, str, int]]:
    return [(rank, handle, score) for rank, handle, score, _ in rows(response)]


def signed_in(programmer: Programmer) -> Client:
    client = Client()
    client.force_login(programmer.user)
    return client


def crowd(
    scores: list[int], *, prefix: str = "p", start: dt.datetime | None = None, **profile
) -> list[Programmer]:
    """Programmers `<prefix>00`, `<prefix>01`, ... with these scores today, the first reaching
    their score earliest. Logged in one batch, as the demo data is."""
    programmers = Programmer.objects.bulk_create(
        Programmer(handle=f"{prefix}{i:02}", **profile) for i in range(len(scores))
    )
    problems = many_problems(max(scores, default=0))
    start = start or NOW - dt.timedelta(hours=6)
    services.solves_import(
        solves=[
            (programmer, problems[k], start + dt.timedelta(minutes=i))
            for i, (programmer, score) in enumerate(zip(programmers, scores, strict=True))
            for k in range(score)
        ]
    )
    return programmers


def many_problems(count: int) -> list[Problem]:
    existing = list(Problem.objects.filter(slug__startswith="extra-").order_by("pk"))
    for i in range(len(existing), count):
        existing.append(Problem.objects.create(slug=f"extra-{i}", title=f"Extra {i}", answer="1"))
    return existing[:count]


def solve(programmer: Programmer, problem: Problem, at: dt.datetime = NOW) -> None:
    services.solve_record(programmer=programmer, problem=problem, solved_at=at)


def row_html(page: str, handle: str) -> str:
    """The <tr> of a handle on a board page."""
    start = page.index(f">{handle}</a>")
    return page[page.rindex("<tr", 0, start) : page.index("</tr>", start)]

"""The site as users call it: real HTTP requests to the site served from a thread of the bench.

Why a server in a thread (wsgiref, one request at a time) rather than gunicorn in a process of
its own: the server then uses the bench's one MongoDB client, whose listener counts exactly the
commands each request sends and the bytes each way (a subprocess's could only be guessed); and
it uses the bench's SQL connection, inside the transaction that holds the seeded programmers for
the while (pages look a handle up in SQL) and is rolled back afterwards, as Django's own live
test server shares the test's connection. `measure` sends one request at a time, so the two
threads never use that connection at once. (`ingest` is what measures gunicorn.)

What is measured is a request with nothing cached: before each timed request Django's cache is
cleared (the page cache, the rendered rows, the board versions, the visible boards, the rate
limits' windows), so each request makes every read its answer needs. One row, marked "page
cached", is what most visitors of a busy board get: the page from the cache.
"""

from __future__ import annotations

import contextlib
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from django.core.cache import cache
from django.core.handlers.wsgi import WSGIHandler
from django.core.management.base import CommandError
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connections, transaction
from django.utils import timezone

from solutions import recent, selectors, tokens
from solutions.models import Board, Programmer

from .counting import HTTP_CACHED, HTTP_UNCACHED, CommandCounter, Measure, measure
from .seed import COUNTRIES


@contextlib.contextmanager
def programmers_saved(programmers: list[Programmer]) -> Iterator[str]:
    """The seeded programmers saved in SQL and a judge's service token, for as long as the block
    runs, in a transaction rolled back afterwards: the token."""
    with transaction.atomic():
        Programmer.objects.bulk_create(programmers, batch_size=5000)
        _service_token, token = tokens.service_token_create(name="bench")
        try:
            yield token
        finally:
            transaction.set_rollback(True)


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass  # the bench prints its own lines


@contextlib.contextmanager
def site_served() -> Iterator[str]:
    """The site on 127.0.0.1 (its base URL), served from a thread on this thread's SQL
    connections, until the block ends."""
    shared = {alias: connections[alias] for alias in connections}
    server: WSGIServer = make_server("127.0.0.1", 0, WSGIHandler(), handler_class=_QuietHandler)

    def serve() -> None:
        for alias, wrapper in shared.items():
            connections[alias] = wrapper
        server.serve_forever(poll_interval=0.05)

    for wrapper in shared.values():
        wrapper.inc_thread_sharing()
    # Django closes a connection that is inside a transaction at the end of each request (it
    # looks unusable); the test client keeps it open the same way.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    thread = threading.Thread(target=serve, name="bench-web", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
        for wrapper in shared.values():
            wrapper.dec_thread_sharing()


class Visitor:
    """An HTTP client like a visitor's browser who is not signed in (no proxy, no cookies kept)
    or a judge's, behind the TLS proxy production has. Any answer but a success fails the run:
    a bench that timed an error page would say nothing."""

    def __init__(self, base: str) -> None:
        self.base = base
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def get(self, path: str) -> None:
        self._send(urllib.request.Request(self.base + path))

    def post(self, path: str, body: dict, *, token: str) -> None:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        data = json.dumps(body).encode()
        self._send(urllib.request.Request(self.base + path, data=data, headers=headers))

    def _send(self, request: urllib.request.Request) -> None:
        request.add_header("X-Forwarded-Proto", "https")  # as production's proxy says
        try:
            with self._opener.open(request, timeout=60) as answer:
                answer.read()
        except urllib.error.HTTPError as error:
            message = f"{request.get_method()} {request.full_url} answered {error.code}"
            raise CommandError(f"{message}: {error.read()[:300]!r}") from error


SCORE_RANGE = "score range (API)"
SCORE_RANGE_QUERY = "min=1000&max=1500"  # sums of one to three best scores of 0 to 1,000


Operation = tuple[str, str, Callable[[int], object]]  # name, how it is measured, the request


def web_operations(
    visitor: Visitor,
    *,
    board: Board,
    programmer: Programmer,
    token: str,
    best: Board | None = None,
) -> list[Operation]:
    """(name, how it is measured, the request) of what users call most: a board's pages, a
    programmer's standing with neighbours and forecast, a profile, the groups ranked, a search,
    a judge's solve (a new problem each time, by the programmer in the middle), and on the
    best-score board `best` who scores in a range."""
    operations = [
        *_board_pages(visitor, board=board, programmer=programmer),
        *_standings_and_search(visitor, board=board, programmer=programmer),
        ("solve (API)", HTTP_UNCACHED, _solve(visitor, handle=programmer.handle, token=token)),
    ]
    if best is not None:
        scores = f"/api/v1/boards/{best.slug}/scores?{SCORE_RANGE_QUERY}"
        operations.append((SCORE_RANGE, HTTP_UNCACHED, _get(visitor, scores)))
    return operations


def _board_pages(visitor: Visitor, *, board: Board, programmer: Programmer) -> list[Operation]:
    """The board's first page through the API and as the page (also from the cache), its middle
    and last pages, and the first page of the programmer's country (or any country)."""
    pages = selectors.board_page(board=board, page=1).pages
    api, page = f"/api/v1/boards/{board.slug}", f"/leaderboard/{board.slug}/"
    country = str(programmer.country) or next(code for code in COUNTRIES if code)
    return [
        ("board page 1 (API)", HTTP_UNCACHED, _get(visitor, api)),
        ("board page 1 (page)", HTTP_UNCACHED, _get(visitor, page)),
        ("board page 1 (page, cached)", HTTP_CACHED, _get(visitor, page)),
        ("middle page (API)", HTTP_UNCACHED, _get(visitor, f"{api}?page={max(1, pages // 2)}")),
        ("last page (API)", HTTP_UNCACHED, _get(visitor, f"{api}?page={pages}")),
        ("a country's page 1 (API)", HTTP_UNCACHED, _get(visitor, f"{api}?country={country}")),
    ]


def _standings_and_search(
    visitor: Visitor, *, board: Board, programmer: Programmer
) -> list[Operation]:
    """The programmer's neighbours with forecast and profile, the groups ranked, and a search
    by a prefix of the programmer's handle."""
    organizations = selectors.group_ranklist(board=board, kind="org").pages
    api, page = f"/api/v1/boards/{board.slug}", f"/leaderboard/{board.slug}/"
    handle = programmer.handle
    middle_organizations = f"{api}/groups?kind=org&page={max(1, organizations // 2)}"
    return [
        (
            "around me (4) with forecast (API)",
            HTTP_UNCACHED,
            _get(visitor, f"{api}/programmers/{handle}?around=4"),
        ),
        ("profile (page)", HTTP_UNCACHED, _get(visitor, f"/u/{handle}/")),
        ("countries ranked (page)", HTTP_UNCACHED, _get(visitor, f"{page}?view=countries")),
        ("countries ranked (API)", HTTP_UNCACHED, _get(visitor, f"{api}/groups?kind=country")),
        ("organizations, middle page (API)", HTTP_UNCACHED, _get(visitor, middle_organizations)),
        (
            "prefix search (API)",  # 100 handles start with it: 20 listed, the rest counted
            HTTP_UNCACHED,
            _get(visitor, f"/api/v1/programmers?prefix={handle[:-2]}&board={board.slug}"),
        ),
    ]


def _get(visitor: Visitor, path: str) -> Callable[[int], object]:
    return lambda _: visitor.get(path)


def _solve(visitor: Visitor, *, handle: str, token: str) -> Callable[[int], object]:
    """A judge's solve by `handle`, of a new problem at each attempt."""

    def solve(attempt: int) -> None:
        body = {
            "id": f"bench-http-{attempt + 1}",
            "programmer": handle,
            "problem": f"bench-http-{attempt + 1}",
            "solved_at": timezone.now().isoformat(),
        }
        visitor.post("/api/v1/solves", body, token=token)

    return solve


def caches_clear() -> None:
    """Django's cache, and what this process keeps of it (`solutions.recent`): a request of a
    row "cache cleared" reads everything afresh."""
    cache.clear()
    recent.clear()


def web_measures(
    counter: CommandCounter,
    *,
    board: Board,
    programmers: list[Programmer],
    middle: Programmer,
    repeat: int,
    best: Board | None = None,
) -> Iterator[Measure]:
    """Each request measured through HTTP on the seeded board (and the best-score board
    `best`), as it is done."""
    with programmers_saved(programmers) as token, site_served() as base:
        visitor = Visitor(base)
        operations = web_operations(visitor, board=board, programmer=middle, token=token, best=best)
        for name, how, operation in operations:
            before = caches_clear if how == HTTP_UNCACHED else None
            yield measure(
                counter,
                operation,
                programmers=len(programmers),
                name=name,
                how=how,
                repeat=repeat,
                before=before,
            )

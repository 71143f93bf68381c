"""The board pages: a board, or its live part that the page's script polls. What they show and
how it is cached is `solutions.board_pages`; the ETag and the reads it shares, `etags`."""

from __future__ import annotations

import math

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_safe

from .. import board_pages, etags, selectors
from ..forms import BoardQueryForm
from ..models import Board, Programmer
from . import programmer_of


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    return redirect("leaderboard")


@require_safe
@etags.live_page(etags.board_etag)
def board(request: HttpRequest, slug: str | None = None, fragment: bool = False) -> HttpResponse:
    """A board page, or (`fragment`) just its live part, which the page's script polls. An
    anonymous visitor's page is rendered once per ETag (see `board_pages`)."""
    board = etags.board_of(request, slug)
    if board is None:
        raise Http404("There are no boards yet." if slug is None else "No board has that name.")
    page_key = board_pages.anonymous_page_key(request, slug, fragment)
    if (cached := board_pages.page_cached(page_key)) is not None:
        return cached
    response = _board_response(request, board, fragment)
    board_pages.page_keep(page_key, request, response)
    return response


def _board_response(request: HttpRequest, board: Board, fragment: bool) -> HttpResponse:
    query = BoardQueryForm(request.GET, board=board)
    if not query.is_valid():
        context = {"board": board, "boards": selectors.boards_visible(), "query": query}
        return render(request, "solutions/board.html", context, status=400)
    programmer = programmer_of(request)
    if query.cleaned_data["find"] == "me" and programmer is not None and not fragment:
        return _find_me(request, board, query, programmer)
    context = board_pages.board_context(
        request=request, board=board, query=query, programmer=programmer, fragment=fragment
    )
    template = "solutions/_board_live.html" if fragment else "solutions/board.html"
    status = 404 if board_pages.page_missing(context) else 200
    return render(request, template, context, status=status)


def _find_me(
    request: HttpRequest, board: Board, query: BoardQueryForm, programmer: Programmer
) -> HttpResponse:
    """Redirect to the page of the board that lists the signed-in programmer."""
    position = selectors.programmer_position(
        board=board, programmer=programmer, day=query.day, scope=query.scope
    )
    params = request.GET.copy()
    for name in ("find", "q", "page"):
        params.pop(name, None)
    anchor = ""
    if position is None:
        messages.info(request, "You are not on this board for that day.")
    else:
        params["page"] = str(math.ceil(position / selectors.PAGE_SIZE))
        anchor = "#me"
    return redirect(f"{request.path}?{params.urlencode()}{anchor}")

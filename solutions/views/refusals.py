"""Form posts refused before any work (a rate limit, too many solves at once): a small page of
their own with Retry-After, rendered without the request, so an abuser's loop costs the check and
this page, never the form nor the page it came from."""

from __future__ import annotations

from django.http import HttpResponse
from django.template.loader import render_to_string

from .. import limits, solve_slots
from ..middleware import ERROR_CODE_HEADER


def too_many_message(over: limits.Limited) -> str:
    """What a form says past a rate limit."""
    if over.limit.name == "wrong-answers":
        what = f"Too many wrong answers to this problem ({over.limit.allowed} a minute)"
    else:
        what = f"Too many sign-ups from your address ({over.limit.allowed} an hour)"
    return f"{what}: try again in {over.retry_after} seconds. Nothing was recorded."


def too_many_response(over: limits.Limited, *, back: str) -> HttpResponse:
    """A form post past a rate limit: 429 with Retry-After and the limit's message. The form is
    not checked again nor the page it came from read and rendered."""
    return refused_response(
        status=429,
        title="Too many tries",
        message=too_many_message(over),
        back=back,
        retry_after=over.retry_after,
        code="rate_limited",
    )


def refused_response(
    *, status: int, title: str, message: str, back: str, retry_after: int, code: str
) -> HttpResponse:
    """A form post refused before any work: a small page of its own with Retry-After and the
    API's error code for the same refusal (`ERROR_CODE_HEADER`), rendered without the request
    (no context processor runs, nothing is read for it)."""
    context = {"title": title, "message": message, "back": back, "back_text": "Back"}
    response = HttpResponse(render_to_string("refused.html", context), status=status)
    response["Retry-After"] = str(retry_after)
    response[ERROR_CODE_HEADER] = code
    return response


def busy_response(busy: solve_slots.SolvesBusy, *, back: str) -> HttpResponse:
    """A right answer past this process's bound on solves at once: 503, nothing recorded."""
    return refused_response(
        status=503,
        title="Busy for a moment",
        message=f"Many answers are being recorded just now: yours was not recorded. Send it "
        f"again in {busy.retry_after} second{'s' if busy.retry_after != 1 else ''}.",
        back=back,
        retry_after=busy.retry_after,
        code="solves_busy",
    )

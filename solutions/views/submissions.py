"""The signed-in programmer's own attempts."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from .. import selectors
from . import programmer_of


@login_required
@require_safe
def submissions(request: HttpRequest) -> HttpResponse:
    programmer = programmer_of(request)
    attempts = selectors.programmer_submissions(programmer=programmer) if programmer else []
    return render(request, "solutions/submissions.html", {"submissions": attempts})

"""Signing up: an account and its programmer's handle, made together."""

from __future__ import annotations

from axes.helpers import get_client_ip_address
from django.contrib import messages
from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from .. import limits, services
from ..forms import SignupForm
from .refusals import too_many_response


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    taken = None
    if request.method == "POST":
        try:  # before the form is checked: a loop of sign-ups costs no query, no hashing
            address = get_client_ip_address(request) or ""
            taken = limits.limit_take(limit=limits.signups(), key=address)
        except limits.Limited as over:
            return too_many_response(over, back=reverse("signup"))
    form = SignupForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        try:
            # The account and the handle are made together, or not at all.
            with transaction.atomic():
                user = form.save()
                programmer = services.programmer_create(user=user, **form.programmer_fields())
        except ValidationError as error:
            form.add_error("username", error)  # the handle field (see SignupForm)
        else:
            login(request, user)
            messages.success(request, f"Welcome, {programmer.handle}! Pick a problem to solve.")
            return redirect("problems")
    if taken is not None:  # only the sign-ups that made an account count
        limits.limit_give_back(taken)
    status = 400 if form.errors else 200  # like the answer form: a refused form is a 400
    return render(request, "registration/signup.html", {"form": form}, status=status)

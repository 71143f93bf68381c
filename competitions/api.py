"""The competition part of the JSON API: judges report every verdict, and anybody reads the
standings they may see. Auth, errors and idempotency are the API's own (`solutions.api`)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest, HttpResponse, JsonResponse

from solutions import idempotency, tokens
from solutions.api import (
    ApiError,
    api_view,
    bearer_token,
    idempotent_response,
    json_body,
    judge_body_moment,
    service_token_required,
)

from . import selectors, services


@dataclass(frozen=True)
class SubmissionInput:
    id: str
    programmer: str
    problem: str
    accepted: bool
    submitted_at: dt.datetime
    body_hash: str


def submission_input(body: Any) -> SubmissionInput:
    """A validated verdict report, or 400 (the same rules as a solve)."""
    submitted_at = judge_body_moment(body, schema="SubmissionRequest", time_field="submitted_at")
    return SubmissionInput(
        id=body["id"],
        programmer=body["programmer"],
        problem=body["problem"],
        accepted=body["verdict"] == "accepted",
        submitted_at=submitted_at,
        body_hash=idempotency.fingerprint(body),
    )


@api_view("POST")
@service_token_required
def submissions(request: HttpRequest) -> HttpResponse:
    """A judge reports a verdict; the same id always gets the first answer."""
    submission = submission_input(json_body(request))
    # Scoped apart from /solves, so one id may be used on both endpoints.
    key = f"submissions:{request.service_token.pk}:{submission.id}"

    def record() -> idempotency.Answer:
        result = services.judge_submission_report(
            key=key,
            handle=submission.programmer,
            problem_slug=submission.problem,
            accepted=submission.accepted,
            submitted_at=submission.submitted_at,
        )
        return idempotency.Answer(status=201, body={"id": submission.id, "counted": result.counted})

    return idempotent_response(
        key=key,
        body_hash=submission.body_hash,
        work=record,
        rejected_code="submission_rejected",
        time_field="submitted_at",
    )


def _viewer(request: HttpRequest) -> AbstractBaseUser | AnonymousUser:
    """Who asks: the holder of an access token when one is sent, else the session's user."""
    token = bearer_token(request)
    if not token:
        return request.user
    user = tokens.access_token_user(token=token)
    if user is None:
        raise ApiError(
            401,
            "unauthorized",
            "The access token is invalid or expired: get one from POST /api/v1/auth/token.",
            {"WWW-Authenticate": 'Bearer realm="api"'},
        )
    return user


@api_view("GET")
def competition_standings(request: HttpRequest, slug: str) -> HttpResponse:
    """The standings the caller may see: public (frozen after the freeze time), their own row
    live, everything live for staff, and the archived final standings once it has ended."""
    competition = selectors.competition_by_slug(slug)
    if competition is None:
        raise ApiError(404, "unknown_competition", f"There is no competition {slug!r}.")
    viewer = _viewer(request)
    services.competition_archive(competition=competition)  # lazily, on the first view after the end
    view = selectors.competition_standings(competition=competition, user=viewer)
    return JsonResponse(view.to_dict())

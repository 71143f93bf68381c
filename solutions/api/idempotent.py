"""Judges' writes answered once per id: a retry gets the first answer (see
`solutions.idempotency`), refusals become the API's errors."""

from __future__ import annotations

import json
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from .. import idempotency, services
from .errors import ApiError


def body_fingerprint(request: HttpRequest) -> str:
    """The hash of the body as sent, so "the same body" means the same JSON, whatever its key
    order or spacing. Called after the body passed validation, so it is valid JSON."""
    return idempotency.fingerprint(json.loads(request.body))


def idempotent_response(
    *,
    key: str,
    body_hash: str,
    work: Callable[[], idempotency.Answer],
    rejected_code: str,
    time_field: str,
) -> HttpResponse:
    """Run `work` once per idempotency key and answer with its first answer: 422 for a time the
    boards cannot take or a new handle that looks like a taken one (the key stays unused), 409
    for a key reused or still in flight."""
    try:
        answer = idempotency.request_answer(key=key, body_hash=body_hash, work=work)
    except services.SolveRejected as error:
        message = (
            f"{time_field}: the boards cannot take it (in the future, or more than "
            f"{settings.LEADERBOARD_MAX_LATE_DAYS} days ago)."
        )
        raise ApiError(422, rejected_code, message) from error
    except services.HandleLooksTaken as error:
        message = (
            f"programmer: a new handle must not look like a taken one, and this one looks like "
            f"{error.params['looks_like']}: report that handle if you mean that programmer."
        )
        raise ApiError(422, "handle_looks_taken", message) from error
    except idempotency.KeyReused as error:
        raise ApiError(409, "id_reused", "This id was used before with another body.") from error
    except idempotency.KeyInFlight as error:
        raise ApiError(
            409,
            "request_in_progress",
            "The first request with this id is still running: retry in a moment.",
            {"Retry-After": "1"},
        ) from error
    response = JsonResponse(answer.body, status=answer.status)
    if answer.replayed:
        response["Idempotent-Replayed"] = "true"
    return response

"""Judges report accepted solves with a service token: `POST /solves`, idempotent by id."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from ... import idempotency, services
from ...solve_slots import solve_slot
from .. import auth
from ..idempotent import body_fingerprint, idempotent_response
from ..schemas.fields import Error
from ..schemas.reports import SolveAnswer, SolveRequest
from .common import ApiRouter

router = ApiRouter()


@router.post(
    "/solves",
    auth=auth.service_token,
    response={
        201: SolveAnswer,
        **{status: Error for status in (400, 401, 409, 413, 422, 429, 503)},
    },
    operation_id="postSolve",
    summary="Report an accepted solve (idempotent by id)",
)
def solves(request: HttpRequest, solve: SolveRequest) -> HttpResponse:
    """Counts the first accepted solve of a (programmer, problem) on every board; a repeat is
    answered with counted=false. A solve of a competition's problem made during its freeze is
    answered with counted=true too, and shows on the boards once the competition has ended.
    Unknown handles and problem slugs are registered on first use.
    The same id with the same body returns the first answer (with the header
    Idempotent-Replayed: true); the same id with another body is 409. A solve in the future
    (beyond 5 minutes of clock skew) or older than the boards still change
    (LEADERBOARD_MAX_LATE_DAYS, 30 by default) is 422, and its id stays unused. The body may be
    64 KiB at most. While the server records as many solves at once as it takes, a solve is 503
    `solves_busy` with Retry-After, and nothing of it is recorded: send it again then."""

    key = f"{request.auth.pk}:{solve.id}"
    with solve_slot():  # before the id is claimed: past the bound nothing is written (503)
        return idempotent_response(
            key=key,
            body_hash=body_fingerprint(request),
            work=lambda: _solve_answer(solve, key=key),
            rejected_code="solve_rejected",
            time_field="solved_at",
        )


def _solve_answer(solve: SolveRequest, *, key: str) -> idempotency.Answer:
    """The solve recorded under its idempotency key, and the answer stored for the key."""
    counted = services.solve_report(
        handle=solve.programmer,
        problem_slug=solve.problem,
        solved_at=solve.solved_at,
        points=solve.points,
        score=solve.score,
        request=key,
    )
    return idempotency.Answer(status=201, body={"id": solve.id, "counted": counted})

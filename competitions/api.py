"""The competition part of the JSON API: judges report every verdict, and anybody reads the
standings they may see. Auth, errors, schemas' field types and idempotency are the API's own
(`solutions.api`); `leaderboard_site.api` mounts this router beside the solutions one."""

from __future__ import annotations

from typing import Annotated

from django.http import HttpRequest, HttpResponse
from ninja import Path, Router
from pydantic import BaseModel, Field, WithJsonSchema

from solutions import idempotency
from solutions.api import auth
from solutions.api.errors import ApiError
from solutions.api.idempotent import body_fingerprint, idempotent_response
from solutions.api.schemas.fields import BOARD_SLUG_PATTERN, Error
from solutions.api.schemas.reports import SubmissionAnswer, SubmissionRequest

from . import selectors, services
from .standings import Cell

router = Router()


class StandingsCell(BaseModel):
    attempts: int = Field(ge=0, description="Attempts up to and including the first accepted one")
    solved_minute: int | None = Field(
        ge=0,
        description="Whole minutes from the start to the accepted attempt; null when not solved",
    )
    first: bool = Field(description="The first accepted solve of this problem in the competition")
    pending: int = Field(
        ge=0,
        description="Attempts after the freeze that this caller cannot see yet (their outcome "
        "is hidden until the competition ends)",
    )


class StandingsRow(BaseModel):
    rank: int = Field(ge=1)
    handle: str
    solved: int = Field(ge=0, description="Problems solved")
    penalty: int = Field(
        ge=0,
        description="Minutes: for each solved problem, the minute of its accepted attempt from "
        "the start plus 20 for every rejected attempt before it",
    )
    problems: dict[str, StandingsCell] = Field(
        description="Every problem of the competition, by slug, in column order"
    )


class Standings(BaseModel):
    competition: str = Field(description="The competition's slug")
    frozen: bool = Field(description="Other programmers' rows stop at the freeze time")
    final: bool = Field(description="The archived final standings of an ended competition")
    rows: list[StandingsRow] = Field(description="In standings order")


CompetitionSlug = Annotated[
    str, WithJsonSchema({"type": "string", "pattern": BOARD_SLUG_PATTERN, "maxLength": 64})
]
COMPETITION = Path(description="The competition's slug", example="winter-cup")


@router.post(
    "/submissions",
    auth=auth.service_token,
    response={
        201: SubmissionAnswer,
        **{status: Error for status in (400, 401, 409, 413, 422, 429)},
    },
    operation_id="postSubmission",
    summary="Report a judge's verdict on an attempt, accepted or rejected (idempotent by id)",
)
def submissions(request: HttpRequest, submission: SubmissionRequest) -> HttpResponse:
    """Records the attempt in the standings of every competition that runs at submitted_at,
    holds the problem, is not archived yet and takes the programmer (registered, when it
    requires registration); attempts outside them are still kept. An accepted verdict also
    counts as a solve on every board, as POST /api/v1/solves does: counted is true only when it
    is the programmer's first accepted solve of the problem (made after a freeze, it shows on
    the boards once the competition has ended). Unknown handles and problem slugs
    are registered on first use. Ids are kept per service token and apart from the ids of
    /solves: the same id with the same body returns the first answer (with the header
    Idempotent-Replayed: true); the same id with another body is 409. A verdict in the future
    (beyond 5 minutes of clock skew) or older than the boards still change
    (LEADERBOARD_MAX_LATE_DAYS, 30 by default) is 422, nothing is written and its id stays
    unused. The body may be 64 KiB at most."""
    # Scoped apart from /solves, so one id may be used on both endpoints.
    key = f"submissions:{request.auth.pk}:{submission.id}"
    return idempotent_response(
        key=key,
        body_hash=body_fingerprint(request),
        work=lambda: _submission_answer(submission, key=key),
        rejected_code="submission_rejected",
        time_field="submitted_at",
    )


def _submission_answer(submission: SubmissionRequest, *, key: str) -> idempotency.Answer:
    """The verdict recorded under its idempotency key, and the answer stored for the key."""
    result = services.judge_submission_report(
        key=key,
        handle=submission.programmer,
        problem_slug=submission.problem,
        accepted=submission.verdict == "accepted",
        submitted_at=submission.submitted_at,
    )
    return idempotency.Answer(status=201, body={"id": submission.id, "counted": result.counted})


def cell_json(cell: Cell | None) -> dict:
    cell = cell or Cell()
    return {
        "attempts": cell.attempts,
        "solved_minute": cell.solved_minute,
        "first": cell.first,
        "pending": cell.pending,
    }


def standings_json(view: selectors.StandingsView) -> dict:
    return {
        "competition": view.competition.slug,
        "frozen": view.frozen,
        "final": view.final,
        "rows": [
            {
                "rank": row.rank,
                "handle": row.handle,
                "solved": row.solved,
                "penalty": row.penalty,
                "problems": {
                    column.slug: cell_json(cell)
                    for column, cell in zip(view.columns, cells, strict=True)
                },
            }
            for row, cells in view.lines
        ],
    }


@router.get(
    "/competitions/{slug:competition}/standings",
    auth=auth.optional_access_token,
    response={200: Standings, 401: Error, 404: Error},
    operation_id="getCompetitionStandings",
    summary="A competition's ICPC-style standings, as the caller may see them",
    # No credentials at all is fine too (the public standings).
    openapi_extra={"security": [{}]},
)
def competition_standings(
    request: HttpRequest,
    competition: CompetitionSlug = COMPETITION,
) -> dict:
    """Who sees what, as on the competition's page: while it runs, everybody sees the standings
    as they were at the freeze time (live before it, frozen=true after it), a programmer also
    sees their own row live, and staff see everything live. Once it has ended everybody sees the
    final standings (final=true): archived within a minute of the end, computed until then. The
    caller is the holder of the access token when one is sent (an invalid or expired one is 401,
    not ignored), else the signed-in user of the session, else anonymous. Hidden and banned
    programmers are never listed, and the ranks of the others close up. Rows are in standings
    order: more problems solved, then less penalty, then an earlier last accepted attempt; equal
    on all three, programmers share a rank (1, 2, 2, 4) and are listed by handle."""
    found = selectors.competition_by_slug(competition)
    if found is None:
        raise ApiError(404, "unknown_competition", f"There is no competition {competition!r}.")
    view = selectors.competition_standings(competition=found, user=request.auth)
    return standings_json(view)

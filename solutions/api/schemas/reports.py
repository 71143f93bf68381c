"""What judges report: accepted solves (`POST /solves`) and every verdict (`POST /submissions`,
the competitions' router), with their answers. Every example here is a request the API accepts
(the tests send each one)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .fields import (
    EXAMPLE_MOMENT,
    Handle,
    Moment,
    Points,
    ProblemSlug,
    Request,
    RequestId,
    Score,
    optional,
)


class SolveRequest(Request):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "solve-1",
                    "programmer": "Alice",
                    "problem": "p3",
                    "solved_at": EXAMPLE_MOMENT,
                }
            ]
        }
    )

    id: RequestId
    programmer: Handle
    problem: ProblemSlug
    solved_at: Moment = Field(
        description="ISO 8601 with a UTC offset, e.g. 2020-01-19T12:00:00+06:00"
    )
    points: Points = optional("Points for this solve; the problem's own points when absent")
    score: Score = optional(
        "A scored problem's result (0 to 10^9): every report is kept, and best-score boards count "
        "each problem's best inside their window (higher or lower is better, per board). Several "
        "reports of a problem each need an id of their own; without a score a report counts on "
        "no best-score board"
    )


class SolveAnswer(BaseModel):
    id: str
    counted: bool = Field(
        description="false when this programmer had already solved the problem and the report "
        "has no score (a report with a score is always kept, even when it is not their best)"
    )


class SubmissionRequest(Request):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "run-9",
                    "programmer": "Alice",
                    "problem": "p1",
                    "verdict": "accepted",
                    "submitted_at": EXAMPLE_MOMENT,
                }
            ]
        }
    )

    id: RequestId
    programmer: Handle
    problem: ProblemSlug
    verdict: Literal["accepted", "rejected"] = Field(
        description="The judge's verdict on this attempt"
    )
    submitted_at: Moment = Field(
        description="When the attempt was made: ISO 8601 with a UTC offset, "
        "e.g. 2020-01-19T10:00:00+06:00"
    )


class SubmissionAnswer(BaseModel):
    id: str
    counted: bool = Field(
        description="true when an accepted verdict counted as the programmer's first solve of "
        "the problem on the boards; false for a rejected verdict or a problem already solved"
    )

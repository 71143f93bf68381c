"""The parts every schema of the API is made of: the strict request base, the field types
(moments, handles, slugs, idempotency keys, points and scores), optional fields and the error
shape.

Requests are strict: no `true` for a number, no number for a string, no extra fields, and every
string free of control characters (NUL included) and lone surrogates. Handles, slugs and
countries take their patterns from `solutions.rules`, where models and forms take them too.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from ...models import MAX_PROBLEM_POINTS, MAX_SCORE
from ...rules import HANDLE_PATTERN, PROBLEM_SLUG_PATTERN, SLUG_CHARACTERS
from ..errors import ErrorCode

# Any character but the C0 and C1 control characters (pydantic refuses lone surrogates itself).
PRINTABLE_PATTERN = r"^[^\x00-\x1f\x7f-\x9f]*$"
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
BOARD_SLUG_PATTERN = rf"^{SLUG_CHARACTERS}+$"
MOMENT_MAX_LENGTH = 64
MAX_PAGE = 100_000
MAX_PAGE_SIZE = 100
MAX_AROUND = 20
EXAMPLE_MOMENT = "2020-01-19T10:00:00Z"


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


# --- field types -------------------------------------------------------------------------------


def moment_in_utc(value: Any) -> dt.datetime:
    """An ISO 8601 date and time with a UTC offset in whole minutes, as an aware UTC datetime."""
    if not isinstance(value, str):
        raise ValueError("give an ISO 8601 date and time as a string")
    if len(value) > MOMENT_MAX_LENGTH or CONTROL_CHARACTERS.search(value):
        raise ValueError("not an ISO 8601 date and time")
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError as error:
        raise ValueError("not an ISO 8601 date and time") from error
    offset = moment.utcoffset()
    if offset is None:
        raise ValueError("give a UTC offset, e.g. +06:00 or Z")
    if offset.seconds % 60 or offset.microseconds:
        raise ValueError("the UTC offset must be whole minutes, e.g. +05:45")
    try:
        # A moment like 0001-01-01T00:00+01:00 has no UTC date at all.
        return moment.astimezone(dt.UTC)
    except OverflowError as error:
        raise ValueError("out of range") from error


def whole_number(value: Any) -> Any:
    """JSON has one number type: 5.0 is the integer 5 (as JSON Schema says); 5.5 and true are
    still refused by the strict integer."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value


def iso_date(value: Any) -> Any:
    """YYYY-MM-DD only (pydantic alone would also take a number of seconds)."""
    if isinstance(value, str):
        try:
            return dt.datetime.strptime(value, "%Y-%m-%d").date()
        except ValueError as error:
            raise ValueError("enter the date as YYYY-MM-DD") from error
    return value


Moment = Annotated[
    dt.datetime,
    BeforeValidator(moment_in_utc),
    WithJsonSchema({"type": "string", "format": "date-time", "maxLength": MOMENT_MAX_LENGTH}),
]
Handle = Annotated[
    str, Field(pattern=HANDLE_PATTERN, description="The programmer's handle (any case)")
]
ProblemSlug = Annotated[str, Field(pattern=PROBLEM_SLUG_PATTERN, description="The problem's slug")]
RequestId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=128,
        pattern=PRINTABLE_PATTERN,
        description="The idempotency key: unique per report",
    ),
]
Points = Annotated[int, Field(ge=1, le=MAX_PROBLEM_POINTS), BeforeValidator(whole_number)]
Score = Annotated[int, Field(ge=0, le=MAX_SCORE), BeforeValidator(whole_number)]


def without_default(schema: dict) -> None:
    """For a field that may be left out but not sent as null: its document shows no default."""
    schema.pop("default", None)


def optional(description: str, **constraints: Any) -> Any:
    """A field that may be left out (None then), but not sent as null."""
    return Field(
        default=None, description=description, json_schema_extra=without_default, **constraints
    )


# --- errors ------------------------------------------------------------------------------------


class ErrorBody(BaseModel):
    code: ErrorCode = Field(description="Stable, for programs; `message` is for people.")
    message: str


class Error(BaseModel):
    error: ErrorBody

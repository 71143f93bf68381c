"""Access tokens: the credentials traded for one, and the token."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, ConfigDict, Field

from .fields import PRINTABLE_PATTERN


class Credentials(BaseModel):
    # Other fields of a login form are ignored, as they always were.
    model_config = ConfigDict(
        extra="ignore",
        strict=True,
        json_schema_extra={
            "examples": [{"username": "alice", "password": "correct horse battery"}]
        },
    )

    username: str = Field(min_length=1, max_length=150, pattern=PRINTABLE_PATTERN)
    password: str = Field(max_length=4096, pattern=PRINTABLE_PATTERN)


class AccessToken(BaseModel):
    token: str
    expires_at: dt.datetime

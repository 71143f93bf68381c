"""The load generator's logbook: what it sent and what it was told, as it saw them.

Every request goes to `requests.jsonl` (time, name, status, milliseconds, Retry-After, and the
API's error code of a 503), and every answer that acknowledges a solve or a verdict to
`acks.jsonl`: the verdict is computed from these files, never from the site's own figures.
Importing this module opens both in the run's folder (CONTEST_DAY_RUN_DIR) and adds the request
listener to Locust's events, so the locustfile's users log every request by importing it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from locust import events

from loadtest.verdict import request_log

RUN_DIR = Path(os.environ.get("CONTEST_DAY_RUN_DIR", "var/contest-day"))
_requests_log = (RUN_DIR / "requests.jsonl").open("a", buffering=1)
_acks_log = (RUN_DIR / "acks.jsonl").open("a", buffering=1)


def ack(record: dict) -> None:
    _acks_log.write(json.dumps({"t": time.time(), **record}) + "\n")


@events.request.add_listener
def log_request(
    request_type,
    name,
    response_time,
    response_length,
    response=None,
    exception=None,
    start_time=None,
    **_,
):
    status = getattr(response, "status_code", 0) or 0
    headers = getattr(response, "headers", None) or {}
    code = request_log.error_code(response) if status == 503 else None
    _requests_log.write(
        json.dumps(
            {
                "t": start_time or time.time(),
                "name": name,
                "status": status,
                "ms": round(response_time or 0, 2),
                "retry_after": headers.get("Retry-After"),
                **({"code": code} if code else {}),
            }
        )
        + "\n"
    )

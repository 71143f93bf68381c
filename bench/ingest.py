"""Sustained ingest: solves posted through the HTTP API from 8 clients at once (`--ingest N`).

Why a module of its own: this is the one measure that needs the site as production runs it,
gunicorn with several workers in processes of their own, so it is timed from outside (solves per
second) rather than counted, unlike the rows of `web`.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator

from django.conf import settings
from django.core.management.base import CommandError
from django.utils import timezone

from solutions import tokens
from solutions.models import Problem, Programmer
from tools import embedded_mongo

INGEST_CLIENTS = 8


def ingest_through_api(uri: str, *, solves: int, report: Callable[[str], None]) -> float:
    """Start the web server on the scratch database and post `solves` solves through the API
    from INGEST_CLIENTS clients at once. Returns solves per second."""
    service_token, token = tokens.service_token_create(name=f"bench {timezone.now():%H%M%S}")
    try:
        with web_server(uri) as base:
            moment = timezone.now().isoformat()
            bodies = [
                {
                    "id": f"bench-ingest-{n}",
                    "programmer": f"ingest{n % 500:04d}",
                    "problem": f"ingest-{n // 500}",
                    "solved_at": moment,
                }
                for n in range(solves)
            ]
            seconds, failures = _post_at_once(f"{base}/api/v1/solves", token, bodies)
        if failures:
            report(f"{len(failures)} of {solves} ingest requests failed: {failures[0]}")
        return solves / seconds
    finally:
        service_token.delete()
        Programmer.objects.filter(handle__startswith="ingest").delete()
        Problem.objects.filter(slug__startswith="ingest-").delete()


@contextlib.contextmanager
def web_server(uri: str) -> Iterator[str]:
    """gunicorn serving the site on the database at `uri` (2 workers of 4 threads), for as long
    as the block runs: its base URL."""
    port = embedded_mongo.free_port()
    environment = {
        **os.environ,
        "MONGODB_URI": uri,
        "MONGODB_DB": settings.MONGODB_DB,
        "DEBUG": "true",
        "ALLOWED_HOSTS": "127.0.0.1",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "leaderboard_site.wsgi", "-w", "2", "--threads", "4"]
        + ["-b", f"127.0.0.1:{port}", "--log-level", "warning"],
        env=environment,
    )
    try:
        _wait_for(f"http://127.0.0.1:{port}/api/v1/boards")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(10)


def _post_at_once(url: str, token: str, bodies: list[dict]) -> tuple[float, list[str]]:
    """POST the bodies from INGEST_CLIENTS clients at once, each its share one after another:
    (seconds taken, the errors of the requests that failed)."""
    failures: list[str] = []

    def client(share: list[dict]) -> None:
        for body in share:
            request = urllib.request.Request(
                url,
                data=json.dumps(body).encode(),
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=60) as answer:
                    answer.read()
            except Exception as error:  # counted, reported by the caller
                failures.append(str(error))

    started = time.perf_counter()
    threads = [
        threading.Thread(target=client, args=(bodies[i::INGEST_CLIENTS],))
        for i in range(INGEST_CLIENTS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started, failures


def _wait_for(url: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except Exception:
            time.sleep(0.2)
    raise CommandError(f"The web server did not answer at {url}.")

"""The applier's lease under the production server (issue 35 §2): gunicorn started with the
repo's gunicorn.conf.py, production settings (DEBUG off, a real key), the embedded MongoDB.

A gunicorn worker takes the lease for a solve and is SIGKILLed holding it (its MongoDB link is
slowed through a latency proxy, so the test sees the lease taken and kills the worker before its
batch gives it back); the next solve posted over HTTP is answered 201 once the dead worker's
lease ran out on the server's clock, well inside gunicorn's worker timeout, and both solves are
on the board. And a lease held by a holder that is alive but stuck (it keeps renewing) for
longer than the engine's wait is answered 503 with Retry-After, never 201 nor 500; the same
request again, once the holder let go, gets its 201.
"""

from __future__ import annotations

import datetime as dt
import http.client
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest
from pymongo import MongoClient

from loadtest.proxy import LatencyProxy
from solutions import mongo
from solutions.leaderboard import applier, lease
from tools.embedded_mongo import free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
GUNICORN_CONF = ROOT / "gunicorn.conf.py"
GUNICORN_TIMEOUT = 60  # gunicorn.conf.py's `timeout` (test_production checks it is read so)
BOARD = "last-7-days"
PROXY = {"X-Forwarded-Proto": "https"}  # the TLS proxy in front: no redirect to https


def production_env(database_url: str, **extra: str) -> dict[str, str]:
    """The production settings as a deployment sets them (no Redis: the solves need none)."""
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "leaderboard_site.settings",
        "DEBUG": "false",
        "SECRET_KEY": "a-long-random-production-key-" + "x7Kq9Lm2Pz" * 5,
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": database_url,
        "LEADERBOARD_TIME_ZONE": "UTC",
        "PYTHONUNBUFFERED": "1",
    }
    for name in ("REDIS_URL", "GUNICORN_CMD_ARGS", "GUNICORN_BIND", "PORT"):
        environment.pop(name, None)
    return {**environment, **extra}


@pytest.fixture(scope="module")
def migrated(tmp_path_factory) -> tuple[Path, str]:
    """A SQLite database with the migrations run and a service token made, by the site's own
    commands: (the file, the token). Each test starts its site on a copy."""
    folder = tmp_path_factory.mktemp("gunicorn-sql")
    database = folder / "db.sqlite3"
    environment = production_env(f"sqlite:///{database}")
    manage = [sys.executable, "manage.py"]
    subprocess.run(
        [*manage, "migrate", "--no-input", "-v", "0"],
        cwd=ROOT,
        env=environment,
        check=True,
        timeout=300,
    )
    made = subprocess.run(
        [*manage, "create_service_token", "judge"],
        cwd=ROOT,
        env=environment,
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    )
    return database, made.stdout.strip().splitlines()[-1]


@dataclass
class Site:
    """gunicorn serving the site, and what the test needs of it."""

    url_port: int
    token: str
    log_path: Path
    master: subprocess.Popen
    db: object  # the site's MongoDB database, read directly by the test
    proxy: LatencyProxy | None = None
    sent: list = field(default_factory=list)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def workers(self) -> list[psutil.Process]:
        return psutil.Process(self.master.pid).children()

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.url_port, timeout=GUNICORN_TIMEOUT * 2)

    def request(self, method: str, path: str, body: dict | None = None, connection=None):
        """(status, headers, JSON body) of one request through the TLS proxy's headers."""
        connection = connection or self.connection()
        headers = {**PROXY, "Authorization": f"Bearer {self.token}"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=json.dumps(body) if body else None, headers=headers)
        response = connection.getresponse()
        answer = response.read()
        connection.close()
        return response.status, dict(response.getheaders()), json.loads(answer or b"{}")

    def server_now_ms(self) -> int:
        """The MongoDB server's clock, in the lease's unit."""
        [row] = self.db.appliers.aggregate(
            [{"$match": {"_id": lease.LEASE}}, {"$project": {"now": {"$toLong": "$$NOW"}}}]
        )
        return row["now"]


@pytest.fixture
def site(request, migrated, embedded_server, tmp_path, settings):
    """gunicorn with gunicorn.conf.py (2 threaded workers, its timeout) on a copy of the migrated
    database and a MongoDB database of its own, reached through a latency proxy of
    `request.param` seconds when the test gives one (`indirect` parametrization). The test
    process reaches the same database directly (to hold the lease and to look), through the
    site's own `mongo` module."""
    database = tmp_path / "db.sqlite3"
    shutil.copy(migrated[0], database)
    name = f"gunicorn_{secrets.token_hex(4)}"
    latency = getattr(request, "param", 0.0)
    proxy = None
    uri = embedded_server.uri
    if latency:
        proxy = LatencyProxy(target=("127.0.0.1", embedded_server.port), delay_seconds=latency)
        uri = f"mongodb://127.0.0.1:{proxy.port}/?retryWrites=false"
    port = free_port()
    environment = production_env(
        f"sqlite:///{database}",
        MONGODB_URI=uri,
        MONGODB_DB=name,
        GUNICORN_BIND=f"127.0.0.1:{port}",
        WEB_CONCURRENCY="2",
        GUNICORN_THREADS="4",
    )
    log_path = tmp_path / "gunicorn.log"
    with log_path.open("ab") as log:
        master = subprocess.Popen(
            # gunicorn's control socket is one path per user by default: the test's own here,
            # so another gunicorn on this machine (a contest-day run) keeps its own.
            [sys.executable, "-m", "gunicorn", "-c", str(GUNICORN_CONF), "leaderboard_site.wsgi"]
            + ["--control-socket", str(tmp_path / "gunicorn.ctl")],
            cwd=ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    client = MongoClient(embedded_server.uri, tz_aware=True)
    settings.MONGODB_DB = name
    mongo.set_client(client)
    built = Site(port, migrated[1], log_path, master, client[name], proxy)
    try:
        deadline = time.monotonic() + 60
        while True:
            with suppress(OSError):
                if built.request("GET", "/api/v1/boards")[0] == 200:
                    break
            assert master.poll() is None and time.monotonic() < deadline, built.log()
            time.sleep(0.3)
        yield built
    finally:
        with suppress(ProcessLookupError):
            os.killpg(master.pid, signal.SIGTERM)
        try:
            master.wait(30)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(master.pid, signal.SIGKILL)
            master.wait(10)
        if proxy:
            proxy.stop()
        mongo.set_client(None)
        client.drop_database(name)
        client.close()


def solve(n: str, handle: str) -> dict:
    return {
        "id": f"gunicorn-{n}",
        "programmer": handle,
        "problem": f"problem-{n}",
        "solved_at": dt.datetime.now(dt.UTC).isoformat(),
    }


def board_handles(site: Site) -> set[str]:
    status, _headers, page = site.request("GET", f"/api/v1/boards/{BOARD}?page_size=50")
    assert status == 200, page
    return {entry["handle"] for entry in page["entries"]}


def worker_serving(site: Site, client_port: int) -> psutil.Process:
    """The gunicorn worker that holds the connection the test opened from `client_port`."""
    for worker in site.workers():
        with suppress(psutil.NoSuchProcess):
            for link in worker.net_connections(kind="tcp"):
                if link.raddr and link.raddr.port == client_port:
                    return worker
    raise AssertionError(f"no worker holds the connection from port {client_port}")


def lease_now(site: Site) -> dict:
    return site.db.appliers.find_one({"_id": lease.LEASE}) or {}


@pytest.mark.parametrize("site", [0.15], indirect=True, ids=["mongodb-150ms-away"])
def test_a_worker_killed_holding_the_lease_stalls_the_next_solve_until_the_lease_runs_out(site):
    """Solve A's worker takes the lease and is SIGKILLed holding it; solve B, posted before that
    lease runs out on the server's clock, is answered 201 after it ran out (the answer of a
    worker that took the lease over), not 500 and without a WORKER TIMEOUT; A (never
    answered) and B are both on the board."""
    assert lease_now(site).get("until") is None  # nobody holds it before A
    first = site.connection()
    first.connect()
    client_port = first.sock.getsockname()[1]
    killed: list = []
    posting = threading.Thread(target=lambda: killed.append(_post_dropped(site, first)))
    posting.start()
    deadline = time.monotonic() + 60
    while not (held := lease_now(site)).get("until"):  # A's worker takes the lease
        assert time.monotonic() < deadline and posting.is_alive(), site.log()
        time.sleep(0.002)
    holder = worker_serving(site, client_port)
    holder.send_signal(signal.SIGKILL)
    holder.wait(10)
    posting.join(30)
    site.proxy.delay = 0.0  # the workers from now on reach MongoDB at once
    # The fault happened: A was never answered, and the dead worker's lease is still its own.
    assert killed == ["dropped"]
    time.sleep(0.3)  # anything the killed worker had in flight reached the server by now
    dead = lease_now(site)
    assert (dead["token"], dead["until"]) == (held["token"], held["until"])

    sent_at = site.server_now_ms()
    status, _headers, answer = site.request("POST", "/api/v1/solves", solve("b", "Bob"))
    answered_at = site.server_now_ms()
    assert status == 201, answer
    assert answer == {"id": "gunicorn-b", "counted": True}
    assert sent_at < dead["until"] <= answered_at  # B waited for the dead worker's lease
    assert lease_now(site)["token"] != dead["token"]  # and a live worker took it over
    assert board_handles(site) == {"Alice", "Bob"}  # A, never answered, is not lost either
    log = site.log()
    assert f"Worker (pid:{holder.pid}) was sent SIGKILL" in log
    assert "WORKER TIMEOUT" not in log
    assert '"POST /api/v1/solves HTTP/1.1" 201' in log
    assert '" 500 ' not in log


def _post_dropped(site: Site, connection: http.client.HTTPConnection) -> str:
    """Post solve A on `connection`: "dropped" when the worker died before answering."""
    try:
        status, _headers, answer = site.request(
            "POST", "/api/v1/solves", solve("a", "Alice"), connection
        )
    except (OSError, http.client.HTTPException):
        return "dropped"
    return f"answered {status}: {answer}"


def test_a_lease_held_past_the_engines_wait_is_answered_503_with_retry_after(site):
    """Another holder is alive but stuck: it holds the lease and renews it (as a batch does
    before each long step) for longer than APPLY_WAIT_SECONDS. The solve is answered 503
    storage_unavailable with Retry-After once the engine stopped waiting, before gunicorn's
    timeout, and is not on the board; once the holder lets go, the same request again gets 201
    and the solve is on the board."""
    token = secrets.token_hex(8)  # a worker's lease token is 16 hex digits
    assert lease.take(token, [])[0]
    answers: list = []
    body = solve("c", "Charlie")
    posting = threading.Thread(
        target=lambda: answers.append(site.request("POST", "/api/v1/solves", body))
    )
    started = time.monotonic()
    posting.start()
    while posting.is_alive():  # the stuck holder keeps its lease
        lease.keep()
        assert time.monotonic() - started < GUNICORN_TIMEOUT
        time.sleep(0.1)
    waited = time.monotonic() - started
    assert lease_now(site)["token"] == token  # the holder kept it the whole time
    [(status, headers, answer)] = answers
    assert status == 503, answer
    assert answer["error"]["code"] == "storage_unavailable"
    assert headers["Retry-After"].isdigit()
    assert applier.APPLY_WAIT_SECONDS <= waited < GUNICORN_TIMEOUT
    assert "Charlie" not in board_handles(site)

    lease.release(token, None)
    status, _headers, answer = site.request("POST", "/api/v1/solves", body)
    assert (status, answer) == (201, {"id": "gunicorn-c", "counted": True})
    assert "Charlie" in board_handles(site)
    log = site.log()
    assert '"POST /api/v1/solves HTTP/1.1" 503' in log
    assert "WORKER TIMEOUT" not in log and '" 500 ' not in log

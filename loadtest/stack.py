"""The production stack of the contest day, started and broken on purpose.

gunicorn (production's gunicorn.conf.py, 4 workers of 4 threads, DEBUG off, a real SECRET_KEY),
a Celery worker and beat, a PostgreSQL database of the run's own on the machine's server, a Redis
server of the run's own (the cache and the broker: restarting it must not disturb anything else
on the machine) and MongoDB (the embedded server on disk, or MONGODB_URI). Each process runs in
its own session, so a fault can hit exactly one of them, and everything is stopped when the run
ends, whatever way it ends.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import suppress
from pathlib import Path

import psycopg

from tools.embedded_mongo import (
    CLIENT_OPTIONS,
    EmbeddedServer,
    free_port,
    port_accepts,
    wait_for_database,
)

from . import browser, cpu
from .proxy import LatencyProxy

POSTGRES_ADMIN_URL = os.environ.get(
    "CONTEST_DAY_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"
)
GUNICORN_CONF = Path(__file__).resolve().parent.parent / "gunicorn.conf.py"
GUNICORN_WORKERS = 4
GUNICORN_THREADS = 4
MONGODB_DOWN_SECONDS = 20.0
# What the run's processes are called in its CPU table (`process_roles`).
ROLES = {
    "gunicorn": "gunicorn (master and workers)",
    "worker": "Celery worker",
    "beat": "Celery beat",
    "redis": "Redis",
}


class Unavailable(RuntimeError):
    """A service the production stack needs is not on this machine."""


def wait_for_http(url: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            request = urllib.request.Request(url, headers=browser.PROXY_HEADERS)
            with urllib.request.urlopen(request, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {seconds:.0f} s")


class Stack:
    """Every process of the run. `start()` brings them up; `stop()` takes them all down."""

    def __init__(self, run_dir: Path, *, latency_ms: float = 0.0) -> None:
        self.run_dir = run_dir
        self.latency_ms = latency_ms
        self.faults_log = run_dir / "faults.jsonl"
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.processes: dict[str, subprocess.Popen] = {}
        self.mongo: EmbeddedServer | None = None
        self.proxy: LatencyProxy | None = None
        self.redis_port = free_port()
        self.database = f"contest_day_{os.getpid()}_{int(time.time())}"
        self.mongodb_uri = ""
        self.over = threading.Event()  # set when the run ends: threads that faulted may go

    # --- the services -------------------------------------------------------------------------

    @staticmethod
    def check_services() -> None:
        """PostgreSQL answering and redis-server installed, or Unavailable saying which not."""
        if not port_accepts(5432):
            raise Unavailable("PostgreSQL is not answering on 127.0.0.1:5432")
        if shutil.which("redis-server") is None:
            raise Unavailable("redis-server is not installed")

    def environment(self) -> dict[str, str]:
        """The production settings, as a deployment behind a TLS proxy sets them."""
        return {
            **os.environ,
            "DEBUG": "false",
            "SECRET_KEY": self.secret_key,
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DATABASE_URL": self.database_url(),
            "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/0",
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{self.redis_port}/1",
            "MONGODB_URI": self.mongodb_uri,
            "MONGODB_DB": "contest_day",
            "TRUSTED_PROXY_HEADER": "X-Forwarded-For",
            "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
            "EMAIL_FILE_PATH": str(self.run_dir / "mail"),
            "SITE_URL": self.base_url,
            "LEADERBOARD_TIME_ZONE": "UTC",
            "LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
        }

    def database_url(self) -> str:
        return POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{self.database}"

    def start(self) -> None:
        self.secret_key = secrets.token_urlsafe(50)
        with psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{self.database}"')
        self._start_redis()
        self._start_mongodb()
        self.manage("migrate", "--no-input", "-v", "0")
        self.manage("collectstatic", "--no-input", "-v", "0")

    def start_site(self) -> None:
        """gunicorn, the Celery worker and beat (after the seed)."""
        # Production's own settings file; the run sets the size, the address, and where the
        # access log goes (the run's folder, not gunicorn.log).
        self._spawn(
            "gunicorn",
            [sys.executable, "-m", "gunicorn", "-c", str(GUNICORN_CONF), "leaderboard_site.wsgi"]
            + ["--workers", str(GUNICORN_WORKERS), "--threads", str(GUNICORN_THREADS)]
            + ["--bind", f"127.0.0.1:{self.port}", "--log-level", "warning"]
            + ["--access-logfile", str(self.run_dir / "access.log")],
        )
        self._start_celery_worker()
        self._spawn(
            "beat",
            [sys.executable, "-m", "celery", "-A", "leaderboard_site", "beat"]
            + ["--loglevel", "WARNING", "--schedule", str(self.run_dir / "celerybeat-schedule")],
        )
        wait_for_http(f"{self.base_url}/api/v1/boards")

    def manage(self, *arguments: str) -> None:
        subprocess.run(
            [sys.executable, "manage.py", *arguments], env=self.environment(), check=True
        )

    def python(self, module: str, *arguments: str) -> None:
        subprocess.run(
            [sys.executable, "-m", module, *arguments], env=self.environment(), check=True
        )

    def _spawn(self, name: str, command: list[str]) -> None:
        log = (self.run_dir / f"{name}.log").open("ab")
        self.processes[name] = subprocess.Popen(
            command,
            env=self.environment(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def _start_redis(self) -> None:
        self._spawn(
            "redis",
            ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1"]
            + ["--save", "", "--appendonly", "no", "--dir", str(self.run_dir)],
        )
        deadline = time.monotonic() + 10
        while not port_accepts(self.redis_port):
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

    def _start_mongodb(self) -> None:
        uri = os.environ.get("MONGODB_URI")
        if not uri:
            self.mongo = EmbeddedServer(
                storage=str(self.run_dir / "mongo"), expire=True, own_session=True
            )
            uri = self.mongo.uri
        if self.latency_ms:
            host, port = _host_port(uri)
            self.proxy = LatencyProxy(target=(host, port), delay_seconds=self.latency_ms / 1000)
            uri = f"mongodb://127.0.0.1:{self.proxy.port}/{CLIENT_OPTIONS}"
        self.mongodb_uri = uri
        if not wait_for_database(uri):
            raise RuntimeError(f"MongoDB did not answer at {uri}")

    def _start_celery_worker(self) -> None:
        self._spawn(
            "worker",
            [sys.executable, "-m", "celery", "-A", "leaderboard_site", "worker"]
            + ["--loglevel", "WARNING", "--pool", "threads", "--concurrency", "2"]
            + ["--without-mingle", "--without-gossip"],
        )

    def stop(self) -> None:
        self.over.set()
        for process in reversed(list(self.processes.values())):
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                with suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
        if self.proxy:
            self.proxy.stop()
        if self.mongo:
            self.mongo.stop()
        with suppress(psycopg.Error), psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True) as db:
            db.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')

    def process_roles(self) -> dict[str, list[int]]:
        """{role: its processes now} of every process the run started (`cpu.CpuWatch`), and
        the machine's PostgreSQL, which serves the run's database."""
        roles = {
            ROLES.get(name, name): cpu.process_tree(process.pid)
            for name, process in self.processes.items()
        }
        if self.mongo is not None:
            roles["MongoDB (embedded server)"] = cpu.process_tree(self.mongo.process.pid)
        roles["PostgreSQL"] = cpu.named("postgres")
        return roles

    # --- the faults ---------------------------------------------------------------------------

    def log_fault(self, fault: str, phase: str, **details) -> None:
        record = {"t": time.time(), "fault": fault, "phase": phase, **details}
        with self.faults_log.open("a") as out:
            out.write(json.dumps(record) + "\n")
        print(f"  fault: {fault} {phase} {details or ''}", flush=True)

    def kill_mongodb(self) -> None:
        """SIGKILL the MongoDB server, as a crash would; it comes back 20 s later on its data."""
        if self.mongo is None:
            self.log_fault("mongodb", "skipped", reason="MONGODB_URI is set: not ours to kill")
            return
        self.log_fault("mongodb", "begin", action="kill -9")
        self.mongo.kill()
        time.sleep(MONGODB_DOWN_SECONDS)
        self.log_fault("mongodb", "restarting")
        self.mongo.start()
        self.log_fault("mongodb", "end")

    def restart_redis(self) -> None:
        """Redis stops and starts again empty (it keeps nothing on disk): the cache and the
        broker's queue are gone."""
        self.log_fault("redis", "begin", action="restart")
        process = self.processes["redis"]
        process.terminate()
        process.wait(10)
        self._start_redis()
        self.log_fault("redis", "end")

    def kill_gunicorn_worker(self) -> None:
        """SIGKILL one gunicorn worker: its requests in flight drop; the master starts another."""
        workers = cpu.children(self.processes["gunicorn"].pid)
        if not workers:
            self.log_fault("gunicorn-worker", "skipped", reason="no worker found")
            return
        self.log_fault("gunicorn-worker", "begin", action="kill -9", pid=workers[0])
        with suppress(ProcessLookupError):
            os.kill(workers[0], signal.SIGKILL)
        self.log_fault("gunicorn-worker", "end")

    def kill_celery_worker(self) -> None:
        """SIGKILL the Celery worker mid-task and start another 5 s later (unacknowledged tasks
        go back to the queue: acks are late)."""
        self.log_fault("celery-worker", "begin", action="kill -9")
        with suppress(ProcessLookupError):
            os.killpg(self.processes["worker"].pid, signal.SIGKILL)
        self.processes["worker"].wait(10)
        time.sleep(5)
        self._start_celery_worker()
        self.log_fault("celery-worker", "end")


def _host_port(uri: str) -> tuple[str, int]:
    address = uri.split("://", 1)[1].split("/", 1)[0].split(",")[0].rsplit("@", 1)[-1]
    host, _, port = address.rpartition(":")
    return host or "127.0.0.1", int(port or 27017)

"""The embedded MongoDB-compatible server (SecantusDB's ``secantusd-py``), started one way for
everybody who needs it: ``make run`` (the Procfile's ``mongo`` line), the tests' fixture and
``manage.py bench``.

SecantusDB is GPL-2.0, so it only ever runs as its own process: this module starts the
``secantusd-py`` program (or, with expiry off, SecantusDB's command line in a process of its own)
and talks to it over the wire; nothing here imports SecantusDB, and the site's
runtime code does not import this module.

From the command line (the Procfile uses it)::

    python -m tools.embedded_mongo serve         # the server, unless MONGODB_URI is set
    python -m tools.embedded_mongo exec CMD...   # wait until MongoDB answers, then become CMD
    python -m tools.embedded_mongo run CMD...    # run CMD with a server, started if none answers

Without ``MONGODB_URI`` the server listens on ``127.0.0.1:$EMBEDDED_MONGODB_PORT`` (27018) and
keeps its data in ``$VAR_DIR/mongo`` (``var/mongo``); ``exec`` and ``run`` hand that address to
their command as ``MONGODB_URI``. With ``MONGODB_URI`` set, ``serve`` starts nothing and only
waits to be stopped: honcho stops every process as soon as one exits.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from pymongo import MongoClient

DEFAULT_PORT = 27018
# Drivers' retryable writes off: SecantusDB 0.7 remembers every retryable write for 30 minutes (up
# to 10,000 of them) and walks that record on each write command, sorting it once it is full, so
# after ten thousand writes every write command costs about 10 ms of its one Python process (the
# cause of ingest at 2.5 solves/s). The site never relies on them: every write is idempotent, and
# a fault answers 503 for the client to retry.
CLIENT_OPTIONS = "?retryWrites=false"
# A cold start on a loaded machine takes a few seconds, a first one more. Opening a store,
# SecantusDB 0.7 reads every document in it back to front (`Storage._scan_max_nat_seq`, on each
# start), so the wait grows with the store: the 13 GB of a million programmers on five boards
# opened in 68 s from the page cache; from this machine's disk 300 s were not enough (a second
# start, with part of it cached by the first, took 166 s more). A start that fails exits, and is
# seen at once.
START_SECONDS = 120
START_SECONDS_PER_GB = 60


def store_gb(storage: str | Path) -> float:
    """The size of the server's store in GB (0 for ":memory:" or a store not made yet)."""
    folder = Path(storage)
    if storage == ":memory:" or not folder.is_dir():
        return 0.0
    return sum(file.stat().st_size for file in folder.iterdir() if file.is_file()) / 2**30


def start_seconds(storage: str | Path) -> float:
    """How long the server may take to answer, opening `storage`."""
    return START_SECONDS + START_SECONDS_PER_GB * store_gb(storage)


# On Ctrl-C honcho tells every process of the Procfile to stop at once and kills what is left
# after 5 s. The server (out of honcho's reach, see EmbeddedServer) waits a second first, so the
# web server and beat close their connections while it still answers, then stops in about 3 s.
STOP_GRACE_SECONDS = 1.0
STOP_SECONDS = 3.5  # then SIGKILL: grace and stop stay inside honcho's 5 s


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_accepts(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server accepts TCP connections on `host`:`port` (the connection sends nothing,
    so a web server logs no request for it)."""
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def answers(uri: str, timeout_ms: int = 500) -> bool:
    """Whether a MongoDB server answers a ping at `uri`."""
    try:
        with MongoClient(
            uri, serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms
        ) as c:
            c.admin.command("ping")
    except Exception:
        return False
    return True


# SecantusDB 0.7's command line accepts `ttl_sweep_seconds` in its config file but never hands it
# to the server, so the sweeper always runs. Without expiry the server is started through this
# launcher instead: still its own process, its own command line, with the sweeper off.
NO_SWEEP_LAUNCHER = (
    "import sys, secantus.cli as cli; "
    "original = cli.SecantusDBServer; "
    "cli.SecantusDBServer = lambda *a, **k: original(*a, **k, ttl_sweep_seconds=0); "
    "sys.exit(cli.main(sys.argv[1:]))"
)


def server_program() -> str:
    """The `secantusd-py` program: on PATH, or beside this Python (an unactivated venv)."""
    found = shutil.which("secantusd-py") or str(Path(sys.executable).with_name("secantusd-py"))
    if not Path(found).exists():
        raise RuntimeError("secantusd-py not found: install the dev extras (pip install -e .[dev])")
    return found


def _die_with_parent() -> None:
    """In the server's process before it starts (Linux): stop when the thread that started it
    ends, even by SIGKILL, so a killed supervisor never leaves the server behind."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the parent's own stop() is the only guard


class EmbeddedServer:
    """One `secantusd-py` process on 127.0.0.1, ready when the constructor returns.

    `storage` is a directory, or ":memory:" for a throwaway one. `expire` runs the server's TTL
    sweeper (every 60 s, against the real clock): the tests turn it off, because they pin the
    clock years back and the sweeper would delete their documents with an expiry in the middle
    of a test. `own_session` keeps the server out of its supervisor's process group, so a stop
    signal sent to the group reaches the server only through `stop()`, after the grace."""

    def __init__(
        self,
        *,
        storage: str = ":memory:",
        port: int | None = None,
        expire: bool = True,
        own_session: bool = False,
        quiet: bool = True,
    ) -> None:
        self.port = port or free_port()
        self.uri = f"mongodb://127.0.0.1:{self.port}/{CLIENT_OPTIONS}"
        if answers(self.uri):
            raise RuntimeError(f"something already answers on port {self.port}")
        self._config = self._write_config(expire=expire)
        self._log = tempfile.TemporaryFile() if quiet else None
        program = [server_program()] if expire else [sys.executable, "-c", NO_SWEEP_LAUNCHER]
        self._command = (
            [*program, "--config", self._config]
            + ["--host", "127.0.0.1", "--port", str(self.port)]
            + ["--storage-path", storage, "--log-level", "WARNING"]
        )
        self._own_session = own_session
        self._storage = storage
        self.start()

    def start(self) -> None:
        """Start the server process and wait until it answers (again, after `kill`)."""
        self.process = subprocess.Popen(
            self._command,
            # Quiet: into a file (a pipe nobody reads would fill up and block the server).
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=self._own_session,
            # Out of the supervisor's group, a signal to the group no longer reaches the server.
            preexec_fn=_die_with_parent if self._own_session else None,
        )
        try:
            self.wait_until_ready()
        except BaseException:
            self.stop()
            raise

    def kill(self) -> None:
        """SIGKILL the server, as a crash would: no goodbye to its clients, no final checkpoint.
        `start()` brings it back on the same port and storage (the fault tests)."""
        self.process.kill()
        self.process.wait()

    @staticmethod
    def _write_config(*, expire: bool) -> str:
        """A config file of our own: passing one also stops the server from picking up a stray
        secantusd.toml from the working directory or the home directory. Standalone: as a
        one-member replica set the server also writes every changed document to its oplog (a
        second encode and write of it, a sixth of a solve's time), for change streams and
        transactions the site never uses."""
        sweep = 60 if expire else 0
        handle, path = tempfile.mkstemp(prefix="secantusd-", suffix=".toml")
        with os.fdopen(handle, "w") as config:
            config.write(f"[server]\nstandalone = true\n[storage]\nttl_sweep_seconds = {sweep}\n")
        return path

    def wait_until_ready(self) -> None:
        seconds = start_seconds(self._storage)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"secantusd-py exited with {self.process.returncode}: {self.log()}"
                )
            if answers(self.uri, timeout_ms=300):
                return
            time.sleep(0.1)
        raise RuntimeError(f"secantusd-py did not answer within {seconds:.0f} s")

    def log(self) -> str:
        """What the server printed (empty when it printed to the terminal)."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        Path(self._config).unlink(missing_ok=True)
        if self._log is not None:
            self._log.close()

    def __enter__(self) -> EmbeddedServer:
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()


# --- the command line ------------------------------------------------------------------------


def embedded_port() -> int:
    value = os.environ.get("EMBEDDED_MONGODB_PORT", str(DEFAULT_PORT))
    if not value.isdigit() or not 0 < int(value) < 65536:
        raise SystemExit(f"EMBEDDED_MONGODB_PORT must be a port number, not {value!r}")
    return int(value)


def embedded_uri() -> str:
    return f"mongodb://127.0.0.1:{embedded_port()}/{CLIENT_OPTIONS}"


def storage_dir() -> Path:
    return Path(os.environ.get("VAR_DIR", "var")) / "mongo"


def configured_uri() -> str:
    """Where the site's MongoDB is: MONGODB_URI, else the embedded server's address."""
    return os.environ.get("MONGODB_URI") or embedded_uri()


def _stop_requested() -> threading.Event:
    """An event set by SIGINT or SIGTERM (instead of dying at once)."""
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    return stop


def serve() -> int:
    """The Procfile's server: the embedded server until told to stop, or, when MONGODB_URI is
    set, nothing but a wait for the stop (honcho ends everything when one process exits)."""
    stop = _stop_requested()
    if os.environ.get("MONGODB_URI"):
        print("MONGODB_URI is set: the site uses that server, no embedded one.", flush=True)
        stop.wait()
        return 0
    storage = storage_dir()
    storage.mkdir(parents=True, exist_ok=True)
    if (size := store_gb(storage)) >= 1:
        minutes = start_seconds(storage) / 60
        print(f"Opening {size:.1f} GB of data: up to {minutes:.0f} minutes.", flush=True)
    try:
        server = EmbeddedServer(
            storage=str(storage), port=embedded_port(), own_session=True, quiet=False
        )
    except RuntimeError as error:
        print(f"The embedded MongoDB server did not start: {error}", file=sys.stderr, flush=True)
        return 1
    print(f"Embedded MongoDB server on {server.uri} (data in {storage})", flush=True)
    while not stop.is_set():
        if server.process.poll() is not None:
            print(f"The embedded server exited ({server.process.returncode}).", file=sys.stderr)
            return 1
        stop.wait(0.5)
    time.sleep(STOP_GRACE_SECONDS)
    server.stop()
    return 0


def wait_for_database(uri: str, seconds: float = START_SECONDS) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if answers(uri, timeout_ms=300):
            return True
        time.sleep(0.2)
    return False


def exec_command(command: list[str]) -> int:
    """Wait until the site's MongoDB answers, then become `command` (same process, so the
    supervisor's signals reach it), with MONGODB_URI pointing at that server."""
    uri = configured_uri()
    # The embedded server (no MONGODB_URI) may be opening a big store.
    seconds = START_SECONDS if os.environ.get("MONGODB_URI") else start_seconds(storage_dir())
    if not wait_for_database(uri, seconds):
        print(f"No MongoDB answered at {uri} within {seconds:.0f} s.", file=sys.stderr)
        return 1
    os.environ["MONGODB_URI"] = uri
    os.execvp(command[0], command)


def run_command(command: list[str]) -> int:
    """Run `command` against the site's MongoDB; when none answers and MONGODB_URI is unset,
    start the embedded server on its data for the length of the command (`make reset`)."""
    uri = configured_uri()
    if answers(uri) or os.environ.get("MONGODB_URI"):
        return subprocess.call(command, env={**os.environ, "MONGODB_URI": uri})
    storage_dir().mkdir(parents=True, exist_ok=True)
    with EmbeddedServer(storage=str(storage_dir()), port=embedded_port()):
        return subprocess.call(command, env={**os.environ, "MONGODB_URI": uri})


USAGE = __doc__.split("From the command line (the Procfile uses it)::")[1].split("Without")[0]


def main(argv: list[str]) -> int:
    match argv:
        case ["serve"]:
            return serve()
        case ["exec", *command] if command:
            return exec_command(command)
        case ["run", *command] if command:
            return run_command(command)
    print(f"usage:{USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

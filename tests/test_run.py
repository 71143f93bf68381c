"""`make run` under honcho: it prints the demo login last, once the site answers; Ctrl-C stops
every process of the Procfile gracefully (no SIGKILL from honcho, every process and the run
itself end with status 0), the embedded MongoDB server included, and leaves nothing behind
within 10 seconds; and the .env it writes lets the README's manage.py commands run by hand."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
from celery.worker import state as worker_state
from kombu import Connection

from tools.embedded_mongo import answers, free_port, start_seconds

ROOT = Path(__file__).resolve().parent.parent
START_SECONDS = 300  # migrations, the embedded server, indexes and a small demo, on a busy machine
STOP_SECONDS = 10


def processes_marked(marker: str) -> list[int]:
    """Live processes whose environment carries `marker`: everything `make run` started, even
    a process that left its process group or lost its parent."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "stat").read_text().rsplit(") ", 1)[1][0] == "Z":
                continue  # a zombie has exited already; only its parent's wait is missing
            if f"RUN_TEST_MARKER={marker}".encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def site_answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/leaderboard/", timeout=2) as page:
            return page.status == 200
    except OSError:
        return False


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def login_printed_after_the_server(output: str) -> bool:
    served = output.find("Quit the server with CONTROL-C.")
    return served >= 0 and output.rfind("Demo staff login: demo / ") > served


def by_hand(
    *command: str, env_file: Path, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """`command` as a developer types it in the checkout: no setting in the environment (but
    `extra`), no port either."""
    settings = {"DEBUG", "SECRET_KEY", "DATABASE_URL", "SITE_URL", "VAR_DIR", "MONGODB_URI"}
    settings |= {"PORT", "EMBEDDED_MONGODB_PORT"}
    environment = {name: value for name, value in os.environ.items() if name not in settings}
    return subprocess.run(
        command,
        cwd=ROOT,
        env={**environment, **(extra or {}), "ENV_FILE": str(env_file)},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc (Linux)")
def test_ctrl_c_on_make_run_stops_everything_gracefully_within_10_seconds(tmp_path):
    marker = uuid.uuid4().hex
    port, mongo_port = free_port(), free_port()
    env_file = tmp_path / ".env"
    # What an earlier `make run` on the default ports left, with a line the developer added.
    env_file.write_text(
        "DEBUG=true\nSITE_URL='http://127.0.0.1:8000'\n"
        "MONGODB_URI='mongodb://127.0.0.1:27018/?retryWrites=false'\nMY_OWN='kept'\n"
    )
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in {"MONGODB_URI", "DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL"}
    }
    environment.update(
        PORT=str(port),
        EMBEDDED_MONGODB_PORT=str(mongo_port),
        VAR_DIR=str(tmp_path / "var"),
        DEMO_PROGRAMMERS="10",
        ENV_FILE=str(env_file),  # not the checkout's own
        RUN_TEST_MARKER=marker,
    )
    log = tmp_path / "run.log"
    with log.open("wb") as output:
        run = subprocess.Popen(
            [str(ROOT / "bin" / "run")],
            cwd=ROOT,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a group of its own, like a terminal's foreground job
        )
    try:
        deadline = time.monotonic() + START_SECONDS
        while not site_answers(port):
            assert run.poll() is None, f"make run exited:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"the site never answered:\n{log.read_text()}"
            time.sleep(1)
        started = processes_marked(marker)
        assert len(started) >= 6, started  # honcho, web, the server, worker and beat at least
        while not login_printed_after_the_server(log.read_text()):  # at the latest, next
            assert time.monotonic() < deadline, f"no demo login at the end:\n{log.read_text()}"
            time.sleep(0.2)

        # The README's commands, typed with no setting, reach the site on the ports it was given.
        written = env_file.read_text()
        assert f"SITE_URL='http://127.0.0.1:{port}'" in written
        assert f"MONGODB_URI='mongodb://127.0.0.1:{mongo_port}/?retryWrites=false'" in written
        assert ":8000" not in written and ":27018" not in written
        assert "MY_OWN='kept'" in written
        indexes = by_hand(sys.executable, "manage.py", "mongo_indexes", env_file=env_file)
        assert indexes.returncode == 0, indexes.stderr
        password = by_hand(str(ROOT / "bin" / "run"), "demo-password", env_file=env_file)
        assert password.returncode == 0, password.stderr
        assert f"http://127.0.0.1:{port}/" in password.stdout, password.stdout

        os.killpg(run.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        stopped_by = time.monotonic() + STOP_SECONDS
        while time.monotonic() < stopped_by and (
            run.poll() is None or processes_marked(marker) or group_alive(run.pid)
        ):
            time.sleep(0.2)
        left = processes_marked(marker)
        assert run.poll() is not None and not left and not group_alive(run.pid), (
            f"still running after {STOP_SECONDS} s: {left}\n{log.read_text()}"
        )
        output = log.read_text()
        assert "SIGKILL" not in output, output
        stops = re.findall(r"\| (\w+)\.1 stopped \(rc=(-?\d+)\)", output)
        assert sorted(stops) == [(name, "0") for name in ("beat", "mongo", "web", "worker")]
        assert run.returncode == 0, output  # so `make run` reports no error
    finally:
        for pid in processes_marked(marker):  # whatever a failure left: ours, by pid
            os.kill(pid, signal.SIGKILL)
        run.wait()

    made = by_hand(sys.executable, "manage.py", "create_service_token", "judge", env_file=env_file)
    assert made.returncode == 0, made.stderr
    assert "created" in made.stdout


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_with_mongodb_uri_set_the_procfiles_server_line_starts_nothing_and_waits_to_be_stopped(
    tmp_path, signum
):
    """honcho stops every process when one exits, so the line must stay up doing nothing."""
    port = free_port()
    line = subprocess.Popen(
        [sys.executable, "-m", "tools.embedded_mongo", "serve"],
        cwd=ROOT,
        env={
            **os.environ,
            "MONGODB_URI": "mongodb://db.example.com/",
            "EMBEDDED_MONGODB_PORT": str(port),
            "VAR_DIR": str(tmp_path),
        },
        stdout=subprocess.PIPE,
        text=True,
    )
    assert "no embedded one" in line.stdout.readline()
    assert line.poll() is None
    assert not (tmp_path / "mongo").exists() and not answers(f"mongodb://127.0.0.1:{port}/")
    line.send_signal(signum)
    assert line.wait(10) == 0


def test_the_embedded_server_is_given_the_time_to_open_a_big_store(tmp_path):
    """SecantusDB reads its whole store whenever it opens it: from this machine's disk, the 13 GB
    of a million programmers took more than 300 s (where a fixed wait made `make run` give up),
    then 166 s more on a second start."""
    small = start_seconds(tmp_path)
    with (tmp_path / "secantus_documents_sh4.wt").open("wb") as store:
        store.truncate(13 * 2**30)  # sparse: its size without the disk
    assert start_seconds(tmp_path) > 300 + 166 + small
    assert start_seconds(":memory:") == small


def test_an_idle_workers_wait_for_messages_ends_as_soon_as_it_is_told_to_stop(
    embedded_server, monkeypatch
):
    """Celery's loop for a polling broker waits 2 s for messages, then once more after a stop
    request: 4 to 6 s idle, past honcho's 5 s. The site's transport ends the wait at once."""
    broker = embedded_server.uri.replace("/?", "/run_test_broker?")
    with Connection(broker, transport="leaderboard_site.broker:Transport") as connection:
        queue = connection.SimpleQueue(f"stop-{uuid.uuid4().hex}")
        queue.put({"solve": 1})
        message = queue.get(timeout=5)
        assert message.payload == {"solve": 1}  # delivered as kombu delivers it
        message.ack()

        threading.Timer(0.3, lambda: monkeypatch.setattr(worker_state, "should_stop", 0)).start()
        began = time.monotonic()
        with pytest.raises(queue.Empty):
            queue.get(timeout=5)
        assert time.monotonic() - began < 1.5
        queue.close()

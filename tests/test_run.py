"""`make run` under honcho: Ctrl-C stops every process of the Procfile, the embedded MongoDB
server included, and leaves nothing behind within 10 seconds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from tools.embedded_mongo import answers, free_port

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


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc (Linux)")
def test_ctrl_c_on_make_run_leaves_no_process_behind_within_10_seconds(tmp_path):
    marker = uuid.uuid4().hex
    port = free_port()
    environment = {
        name: value
        for name, value in os.environ.items()
        if name not in {"MONGODB_URI", "DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL"}
    }
    environment.update(
        PORT=str(port),
        EMBEDDED_MONGODB_PORT=str(free_port()),
        VAR_DIR=str(tmp_path / "var"),
        DEMO_PROGRAMMERS="10",
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
        assert "Demo staff login: demo / " in log.read_text()
    finally:
        for pid in processes_marked(marker):  # whatever a failure left: ours, by pid
            os.kill(pid, signal.SIGKILL)
        run.wait()


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

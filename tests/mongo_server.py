"""Start and stop the embedded MongoDB-compatible server (SecantusDB) for tests and the run script.

SecantusDB is GPL-2.0, so it runs as its own process: the app only talks to it over the wire.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from pymongo import MongoClient


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_command() -> str:
    found = shutil.which("secantusd-py") or str(Path(sys.executable).with_name("secantusd-py"))
    if not Path(found).exists():
        raise RuntimeError("secantusd-py not found: install the dev extras (pip install -e .[dev])")
    return found


class EmbeddedServer:
    def __init__(self, storage: str = ":memory:", port: int | None = None) -> None:
        self.port = port or free_port()
        self.uri = f"mongodb://127.0.0.1:{self.port}/"
        self.process = subprocess.Popen(
            [
                server_command(),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--storage-path",
                storage,
                "--log-level",
                "WARNING",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.wait_until_ready()

    def wait_until_ready(self, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"secantusd-py exited: {self.process.stderr.read().decode()}")
            try:
                MongoClient(self.uri, serverSelectionTimeoutMS=300).admin.command("ping")
                return
            except Exception:
                time.sleep(0.2)
        raise RuntimeError("secantusd-py did not answer in time")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()

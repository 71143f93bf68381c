"""Where the machine's CPU went during the load, process by process, read from ``/proc``.

The contest day's verdict comes from the load generator's log; this is the other half of a run's
account: which process of the stack took the cores while the judges were served, so a run that
misses its targets says by measurement which part stops it. The kernel counts each process's
user and system time (every thread); a process is known by its pid and start time, so one the
faults killed keeps its last reading and the one started in its place counts from its birth.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_SECONDS = 1.0

Roles = Callable[[], dict[str, list[int]]]
"""{role: the pids that play it now}: asked at every sample, as processes come and go."""


def cpu_seconds(pid: int) -> tuple[int, float] | None:
    """(the process's start time in ticks, its user and system CPU in seconds), or None once it
    is gone. The fields after the command's closing parenthesis (the command may hold spaces)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    utime, stime, start = int(fields[11]), int(fields[12]), int(fields[19])
    return start, (utime + stime) / TICKS


def children(pid: int) -> list[int]:
    """The processes this one started (every thread's), as they are now."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with suppress(OSError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


def process_tree(pid: int) -> list[int]:
    """The process and every process under it (a gunicorn master and its workers, say)."""
    found, stack = [], [pid]
    while stack:
        parent = stack.pop()
        found.append(parent)
        stack += children(parent)
    return found


def named(command: str) -> list[int]:
    """Every process of the machine whose command name is this (PostgreSQL's server and its
    backends, which the run does not start)."""
    pids = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        with suppress(OSError):
            if comm.read_text().strip() == command:
                pids.append(int(comm.parent.name))
    return pids


@dataclass
class Usage:
    """A role's CPU over the watched span."""

    role: str
    seconds: float
    processes: int  # how many processes played it, restarted ones included


class CpuWatch:
    """Samples every role's processes each SAMPLE_SECONDS between `start()` and `stop()`. A
    process seen at the first sample counts from that reading; one seen later was born inside
    the span (a restarted server, a new worker) and counts whole; one gone counts up to its
    last reading (at most a sample's worth of its CPU is missed)."""

    def __init__(self, roles: Roles) -> None:
        self._roles = roles
        self._first: dict[tuple[str, int, int], float] = {}
        self._last: dict[tuple[str, int, int], float] = {}
        self._began = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-watch", daemon=True)

    def start(self) -> None:
        self._sample()
        self._began = True
        self._thread.start()

    def stop(self) -> list[Usage]:
        self._stop.set()
        self._thread.join()
        self._sample()
        return self.usage()

    def usage(self) -> list[Usage]:
        by_role: dict[str, Usage] = {}
        for key, last in self._last.items():
            role = key[0]
            usage = by_role.setdefault(role, Usage(role, 0.0, 0))
            usage.seconds += last - self._first.get(key, 0.0)
            usage.processes += 1
        return sorted(by_role.values(), key=lambda usage: -usage.seconds)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self._sample()

    def _sample(self) -> None:
        for role, pids in self._roles().items():
            for pid in pids:
                reading = cpu_seconds(pid)
                if reading is None:
                    continue
                key = (role, pid, reading[0])
                if not self._began:
                    self._first[key] = reading[1]
                self._last[key] = reading[1]


def cpu_table(usages: list[Usage], seconds: float, accepted: int) -> list[str]:
    """The markdown table of a run: each role's CPU seconds, the cores it kept busy on average
    and its CPU an accepted solve."""
    lines = [
        "| process | CPU s | cores (of " + str(os.cpu_count()) + ") | ms an accepted solve |",
        "|---|---|---|---|",
    ]
    for usage in [*usages, Usage("all", sum(u.seconds for u in usages), 0)]:
        per_solve = f"{1000 * usage.seconds / accepted:.0f}" if accepted else "—"
        lines.append(
            f"| {usage.role} | {usage.seconds:.0f} | {usage.seconds / seconds:.2f} | {per_solve} |"
        )
    return lines

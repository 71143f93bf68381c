"""CPU time an operation costs: the MongoDB server's process and the bench's own (issue 36).

Why a module of its own: time on a shared machine is mostly waiting, but CPU is what a solve
takes from the server (the embedded one is one Python process, so one core at most) and from
the site. The server's is read from `/proc/<pid>/stat` (utime + stime of every thread of the
process, in clock ticks: 10 ms on Linux, so a row's figure is exact to 10 ms over its N runs,
not per run) when the bench knows its process: the embedded server it started, or
`--server-pid`. The bench's own (`time.process_time`, every thread: the web server in its
thread serves the HTTP rows) is "Django CPU": the site's views, the driver and the engine.
Neither is split by who asked: the server's background work (its checkpoint every 60 s) falls
into whichever row runs then.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu_seconds(pid: int) -> float | None:
    """The CPU seconds process `pid` has used, all its threads (None: unknown, or gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name, in parentheses, may hold spaces: the fields counted after it.
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime (fields 14, 15)


@dataclass(frozen=True)
class CpuReading:
    """The server's CPU seconds (None: its process unknown) and the bench's, at one moment."""

    server: float | None
    own: float

    @classmethod
    def now(cls, server_pid: int | None) -> CpuReading:
        server = None if server_pid is None else process_cpu_seconds(server_pid)
        return cls(server, time.process_time())

    def per_operation(self, later: CpuReading, operations: int) -> tuple[float | None, float]:
        """Milliseconds of CPU an operation, server's and own, from this reading to `later`."""
        server = None
        if self.server is not None and later.server is not None:
            server = (later.server - self.server) * 1000 / operations
        return server, (later.own - self.own) * 1000 / operations

"""What a solve costs the MongoDB server, its folds included: CPU, commands, bytes and oplog.

    python -m tools.solve_costs                         # 10,000 programmers, 1,100 solves
    python -m tools.solve_costs --programmers 1000 --solves 300 --oplog
    python -m tools.solve_costs --programmers 3000 --solves 600 --by-command

It seeds the bench's boards (`bench.seed`, the five default boards) into a scratch embedded
server of its own, then records solves of one problem by a different programmer each time, as a
judge would report them, and prints per solve: the server process's CPU (from `/proc`, the
server's background work measured apart while idle), the site's own CPU, the commands and the
bytes sent and received. Enough solves fold every journal several times, so the mean carries its
folds. With `--oplog` the server runs as a one-member replica set, as production does, and the
oplog entries the solves wrote are summed by collection (a replica set ships each of them to
every member); the server's CPU is then higher by the oplog's own writing. `--spread` gives the
solves times spread over the last N seconds instead of one burst (a problem's solvers land in
one minute's chunk or in many). `--by-command` adds the server's CPU during each command, summed
by the command's shape (its name, and for a `bulkWrite` the collections and kinds of its
writes), from every server thread's `schedstat` around the command (the solves run one command
at a time); with `--one-write-a-command` each write of a `bulkWrite` is sent alone, so the table
names what each write costs (each then pays a command's own overhead, some 0.5 ms).

Why beside `manage.py bench`: the bench measures every operation at several sizes through HTTP;
this isolates the solve, the one write that scales with the contest, and the oplog, which the
bench's standalone server does not keep. Run it in a checkout of an older commit (copied there)
to compare two engines on one machine in one hour.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import glob
import os
import random
import tempfile
import time

import django
from pymongo import monitoring

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard_site.settings")
os.environ.setdefault("DEBUG", "true")


def server_thread_ns(pid: int) -> int:
    """The CPU time every thread of a process has used so far, in nanoseconds (`schedstat`:
    exact, where `stat` counts 10 ms ticks)."""
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            total += int(open(path).read().split()[0])
        except OSError:
            pass  # a thread that ended meanwhile
    return total


def command_shape(command: dict) -> str:
    """A command's name and collection; a `bulkWrite`'s writes by collection and kind (an
    aggregation pipeline, or the update's operators)."""
    name = next(iter(command))
    if name != "bulkWrite":
        return f"{name} {command.get(name)}"
    namespaces = [info["ns"].split(".", 1)[1] for info in command["nsInfo"]]
    shapes = collections.Counter()
    for op in command["ops"]:
        kind = next(k for k in ("insert", "update", "delete") if k in op)
        update = op.get("updateMods")
        how = "pipeline" if isinstance(update, list) else ",".join(sorted(update or {})) or kind
        shapes[f"{namespaces[op[kind]]} {how}"] += 1
    return "bulkWrite: " + "; ".join(f"{n} x {shape}" for shape, n in shapes.items())


class ServerCPUByCommand(monitoring.CommandListener):
    """The server's CPU during each command, summed by `command_shape` while `on`."""

    def __init__(self) -> None:
        self.pid, self.on = 0, False
        self.started_at: dict[int, tuple[str, int]] = {}
        self.cpu: collections.Counter = collections.Counter()
        self.count: collections.Counter = collections.Counter()

    def started(self, event) -> None:
        if self.on:
            self.started_at[event.request_id] = (
                command_shape(event.command),
                server_thread_ns(self.pid),
            )

    def succeeded(self, event) -> None:
        if (begun := self.started_at.pop(event.request_id, None)) is not None:
            shape, before = begun
            self.cpu[shape] += server_thread_ns(self.pid) - before
            self.count[shape] += 1

    failed = succeeded


def server_cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def replica_set_config(*, expire: bool) -> str:
    """A config that keeps the server a one-member replica set: it writes an oplog."""
    handle, path = tempfile.mkstemp(prefix="secantusd-", suffix=".toml")
    with os.fdopen(handle, "w") as config:
        config.write("[server]\nstandalone = false\n[storage]\nttl_sweep_seconds = 0\n")
    return path


def oplog_by_collection(oplog, after) -> tuple[collections.Counter, collections.Counter]:
    import bson

    sizes: collections.Counter = collections.Counter()
    entries: collections.Counter = collections.Counter()
    for entry in oplog.find({"ts": {"$gt": after}}):
        key = (entry.get("op"), entry.get("ns", "").split(".", 1)[-1].split(".")[0])
        sizes[key] += len(bson.encode(entry))
        entries[key] += 1
    return sizes, entries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programmers", type=int, default=10_000)
    parser.add_argument("--solves", type=int, default=1_100)
    parser.add_argument("--oplog", action="store_true", help="run as a replica set, sum its oplog")
    parser.add_argument("--spread", type=int, default=0, help="solve times over this many seconds")
    parser.add_argument("--by-command", action="store_true", help="the server's CPU by command")
    parser.add_argument(
        "--one-write-a-command", action="store_true", help="each write of a bulk sent alone"
    )
    options = parser.parse_args()
    if options.by_command:
        options.by_command = ServerCPUByCommand()
        monitoring.register(options.by_command)  # before any client is made
    django.setup()
    if options.one_write_a_command:
        write_one_at_a_time()
    from tools import embedded_mongo

    if options.oplog:
        embedded_mongo.EmbeddedServer._write_config = staticmethod(replica_set_config)
    with tempfile.TemporaryDirectory(prefix="solve-costs-") as storage:
        with embedded_mongo.EmbeddedServer(storage=storage) as server:
            measure(server, options)


def measure(server, options) -> None:
    from bench.counting import CommandCounter
    from bench.seed import scratch_database
    from solutions import mongo

    pid, counter = server.process.pid, CommandCounter()
    with scratch_database(server.uri, counter):
        solve = seeded(options)
        mongo.get_db().client.admin.command("fsync")  # the seed's writes out of the way
        idle_start = server_cpu_seconds(pid)
        time.sleep(5)
        idle = (server_cpu_seconds(pid) - idle_start) / 5
        oplog = mongo.get_db().client.local.oplog.rs
        last = next(iter(oplog.find().sort("$natural", -1).limit(1)), None)
        started, own, wall = server_cpu_seconds(pid), time.process_time(), time.perf_counter()
        by_command = options.by_command
        if by_command:
            by_command.pid, by_command.on = pid, True
        with counter.counting() as tally:
            for n in range(options.solves):
                solve(n)
        wall = time.perf_counter() - wall
        server = server_cpu_seconds(pid) - started - idle * wall
        report(options, tally, server=server, own=time.process_time() - own, idle=idle)
        if by_command:
            by_command.on = False
            report_by_command(by_command, solves=options.solves)
        if options.oplog and last is not None:
            report_oplog(*oplog_by_collection(oplog, last["ts"]), solves=options.solves)


def seeded(options):
    """Seed the boards; return a solve by the n-th of 1,000 programmers in a country."""
    from django.utils import timezone

    from bench.seed import bench_seed
    from solutions import mongo, services
    from solutions.models import Board, Problem

    boards = [board for board in Board.objects.all() if not board.is_best]
    mongo.ensure_indexes([board.slug for board in boards])
    size = options.programmers
    seeded = bench_seed(boards=boards, measured=boards[0], size=size, rng=random.Random(size))
    programmers = seeded.programmers
    in_a_country = [programmer for programmer in programmers if programmer.country]
    others = random.Random(size + 1).sample(in_a_country, min(len(in_a_country), 1000))
    problem, now = Problem(slug="solve-costs", points=50), timezone.now()

    def solve(n: int) -> None:
        at = now - dt.timedelta(seconds=options.spread * (1 - n / options.solves))
        programmer = others[n % len(others)]
        services.solve_record(programmer=programmer, problem=problem, solved_at=at)

    return solve


def report(options, tally, *, server: float, own: float, idle: float) -> None:
    each = options.solves
    commands = sum(tally.names.values()) / each
    print(
        f"{options.programmers:,} programmers, {each} solves: server CPU "
        f"{server * 1000 / each:.1f} ms a solve (idle {idle * 1000:.0f} ms/s taken out), "
        f"site CPU {own * 1000 / each:.1f} ms, {commands:.1f} commands, "
        f"{tally.sent / each / 1000:.1f} KB sent, {tally.received / each / 1000:.1f} KB received"
    )


def report_by_command(by_command: ServerCPUByCommand, *, solves: int) -> None:
    total = sum(by_command.cpu.values())
    print(f"server CPU by command: {total / 1e6 / solves:.1f} ms a solve")
    for shape, cpu in by_command.cpu.most_common():
        each = by_command.count[shape]
        print(
            f"  {cpu / 1e6 / solves:6.2f} ms a solve, {each / solves:5.2f} a solve, "
            f"{cpu / 1e6 / each:6.2f} ms each: {shape}"
        )


def write_one_at_a_time() -> None:
    """Send each write of `mongo.write_together` as a command of its own (measuring only: an
    ordered bulk stops at its first conflict, these go on)."""
    from solutions import mongo

    together = mongo.write_together

    def one_at_a_time(writes: list) -> None:
        for write in writes:
            together([write])

    mongo.write_together = one_at_a_time


def report_oplog(sizes: collections.Counter, entries: collections.Counter, *, solves: int) -> None:
    total, count = sum(sizes.values()), sum(entries.values())
    print(f"oplog: {total / solves / 1000:.1f} KB a solve, {count / solves:.1f} entries")
    for (op, name), size in sizes.most_common():
        print(f"  {op} {name}: {size / solves / 1000:.2f} KB, {entries[op, name] / solves:.2f}")


if __name__ == "__main__":
    main()

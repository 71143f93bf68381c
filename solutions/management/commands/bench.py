"""Measure what the common reads and writes cost as a board grows (see `bench`).

Why it exists: the design promises that every read and every solve costs the same at a thousand
programmers as at a million, in MongoDB commands and in bytes, through HTTP as users call it.
For each size this seeds a scratch database (``<MONGODB_DB>_bench``, dropped afterwards), runs
each operation `--repeat` times, in process and through HTTP, and prints one Markdown table with
the sizes side by side: commands, documents examined, bytes sent and received, the CPU of the
MongoDB server's process and of the bench's own an operation, median and p95. The server's CPU
is known for the embedded server the bench starts, or with `--server-pid`; "—" otherwise.
Last at each size, the first solve after a few midnights (the clock moved on a day each time)
with the day change it brings, and the first page read after it. Without a best-score board
among the site's, one of the bench's own is measured (a score reported, a score range).
With `--structure` it measures the order structure alone instead, in memory, at sizes no
database here could be seeded with (`bench.structure`: 1M, 25M and 100M members).
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from bench import structure
from bench.report import table, verdict
from bench.run import bench_run
from bench.seed import mongodb_server

SIZES_DEFAULT = "1000,10000"

STRUCTURE_SIZES = [1_000_000, 25_000_000, 100_000_000]


class Command(BaseCommand):
    help = (
        "Count the MongoDB commands and bytes of the common operations, in process and through "
        "HTTP, and time them, at several board sizes; print a Markdown table."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--programmers",
            default=SIZES_DEFAULT,
            help="Comma-separated board sizes to measure (default: 1000,10000; with "
            "--structure: 1000000,25000000,100000000).",
        )
        parser.add_argument("--uri", help="The MongoDB server (default: MONGODB_URI or embedded).")
        parser.add_argument(
            "--server-pid",
            type=int,
            help="The process id of the MongoDB server at --uri or MONGODB_URI, on this machine, "
            "to read its CPU (known already for the embedded server the bench starts).",
        )
        parser.add_argument("--repeat", type=int, default=20, help="Timed runs per operation.")
        parser.add_argument("--redis", help="Also run the operations on Redis at this URL.")
        parser.add_argument(
            "--ingest", type=int, default=0, help="Post this many solves through the HTTP API."
        )
        parser.add_argument(
            "--folds",
            type=int,
            default=3,
            help="Folds of every journal the row of solves by another programmer each time takes "
            "in its mean (0: no such row).",
        )
        parser.add_argument(
            "--structure",
            action="store_true",
            help="Measure the order structure alone, in memory (sizes default to 1M, 25M, 100M).",
        )

    def handle(self, *args, programmers: str, uri: str | None, repeat: int, **options) -> None:
        try:
            sizes = [int(size.replace("_", "")) for size in programmers.split(",")]
        except ValueError as error:
            raise CommandError("--programmers takes sizes like 1000,100000.") from error
        if not sizes or min(sizes) < 10 or repeat < 1:
            raise CommandError("Sizes start at 10 programmers, and --repeat at 1.")
        if options["structure"]:
            if programmers == SIZES_DEFAULT:
                sizes = STRUCTURE_SIZES
            rows = structure.structure_bench(sorted(set(sizes)), repeat)
            self.stdout.write(structure.structure_table(rows))
            return
        with mongodb_server(uri, options["server_pid"]) as server:
            self.stdout.write(
                f"Measuring on {server.uri} (scratch database {settings.MONGODB_DB}_bench)"
            )
            results = bench_run(
                uri=server.uri,
                server_pid=server.pid,
                sizes=sorted(set(sizes)),
                repeat=repeat,
                report=lambda line: self.stdout.write(self.style.NOTICE(line)),
                redis_url=options["redis"],
                ingest=options["ingest"],
                folds=options["folds"],
            )
        self.stdout.write("")
        for line in table(results):
            self.stdout.write(line)
        self.stdout.write("")
        for line in verdict(results):
            self.stdout.write(line)

"""What tomorrow's finish holds the lease for, when many solve while tomorrow is made.

    python -m tools.last_hour_finish                     # 30,000 programmers, 1,000 solving
    python -m tools.last_hour_finish --programmers 100000 --others 2000

It seeds the bench's boards (`bench.seed`) into a scratch embedded server and makes tomorrow,
50 minutes before its midnight, as the bench's last-hour rows do (`bench.new_day`): a solve begins
it (under the lease), `--others` programmers solve before its pass, the prepare task's pass runs
(off the lease; in rounds where the commit has them, which move those others), and a solve
finishes it (under the lease, with whoever the pass left it). It prints the three parts'
commands, bytes, time and the server's CPU. Run it in a checkout of an older commit (copied
there) to compare two engines on one machine in one hour.
"""

from __future__ import annotations

import argparse
import os
import random
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard_site.settings")
os.environ.setdefault("DEBUG", "true")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programmers", type=int, default=30_000)
    parser.add_argument("--others", type=int, default=1_000)
    options = parser.parse_args()
    django.setup()
    from bench.counting import CommandCounter
    from bench.seed import best_board, mongodb_server, scratch_database
    from solutions import mongo
    from solutions.models import Board

    with mongodb_server(None) as server, best_board(list(Board.objects.all())) as boards:
        counter = CommandCounter(server.pid)
        with scratch_database(server.uri, counter):
            mongo.ensure_indexes([board.slug for board in boards])
            measure(counter, boards, options.programmers, options.others)


def measure(counter, boards, size: int, others: int) -> None:
    from bench import new_day
    from bench.seed import bench_seed
    from solutions import clock

    started = time.perf_counter()
    seeded = bench_seed(boards=boards, measured=boards[0], size=size, rng=random.Random(size))
    print(f"Seeded {size:,} programmers in {time.perf_counter() - started:.0f} s.", flush=True)
    solving = [p for p in seeded.programmers if p != seeded.middle][:others]
    day = clock.today() + 1
    runs = new_day.last_hour_runs(counter, boards, seeded.middle, solving, day)
    print(
        f"| {size:,} programmers, {len(solving):,} solved before the pass | commands | "
        "KB sent | KB received | ms | server CPU ms |"
    )
    print("|---|---|---|---|---|---|")
    for part, run in zip(("begin (lease)", "pass (off it)", "finish (lease)"), runs, strict=True):
        m = run.measure(size, part, "")
        cpu = "?" if m.server_cpu is None else f"{m.server_cpu:,.0f}"
        print(
            f"| {part} | {m.commands:,.0f} | {m.sent / 1000:,.0f} | {m.received / 1000:,.0f} | "
            f"{m.median:,.0f} | {cpu} |"
        )


if __name__ == "__main__":
    main()

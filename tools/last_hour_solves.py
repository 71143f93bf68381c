"""Solves while tomorrow is made: how many go through, and how long each takes.

    python -m tools.last_hour_solves                    # 30,000 programmers
    python -m tools.last_hour_solves --programmers 100000

It seeds the bench's boards (`bench.seed`) into a scratch embedded server, moves the clock to 50
minutes before tomorrow's midnight, and in a thread makes tomorrow as a site with beat does: a
solve begins it, and the prepare task's pass (`leaderboard.days_pass`) copies and moves it off
the lease. Meanwhile this thread solves, a programmer after another, until the thread is done,
and prints the solves begun during the preparation with their median, 95th percentile and
longest time. On a commit before the pass ran off the lease (no `days_pass`), the first solve
makes the whole day under the lease and the others wait for it. Run it in a checkout of that
commit to compare (its figures are for the same seed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import statistics
import tempfile
import threading
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "leaderboard_site.settings")
os.environ.setdefault("DEBUG", "true")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programmers", type=int, default=30_000)
    options = parser.parse_args()
    django.setup()
    from bench.counting import CommandCounter
    from bench.seed import scratch_database
    from tools import embedded_mongo

    with tempfile.TemporaryDirectory(prefix="last-hour-") as storage:
        with embedded_mongo.EmbeddedServer(storage=storage) as server:
            with scratch_database(server.uri, CommandCounter()):
                measure(options.programmers)


def measure(size: int) -> None:
    import time_machine
    from django.conf import settings

    from bench.seed import bench_seed
    from solutions import clock, leaderboard, mongo
    from solutions.models import Board

    boards = list(Board.objects.all())
    mongo.ensure_indexes([board.slug for board in boards])
    seeded = bench_seed(boards=boards, measured=boards[0], size=size, rng=random.Random(size))
    people = random.Random(1).sample(seeded.programmers, 200)
    tomorrow = clock.today() + 1
    midnight = leaderboard.day_start(tomorrow, settings.LEADERBOARD_TIME_ZONE)
    windows = {board.slug: board.spec for board in boards}
    with time_machine.travel(midnight - dt.timedelta(minutes=50), tick=True):
        preparing = threading.Thread(target=prepare, args=(people[0], windows))
        preparing.start()
        time.sleep(0.5)
        times = solves_while(preparing, people)
        preparing.join()
    times.sort()
    print(
        f"{size:,} programmers: {len(times)} solves begun while tomorrow was made; median "
        f"{statistics.median(times) * 1000:.0f} ms, p95 {times[int(len(times) * 0.95)] * 1000:.0f}"
        f" ms, longest {times[-1] * 1000:.0f} ms"
    )


def solve(programmer, n: int) -> None:
    from django.utils import timezone

    from solutions import services
    from solutions.models import Problem

    problem = Problem(slug=f"last-hour-{n}", points=50)
    services.solve_record(programmer=programmer, problem=problem, solved_at=timezone.now())


def prepare(programmer, windows) -> None:
    """Begin tomorrow with a solve, then do its pass as the prepare task does (when there is
    one: before, the solve made the whole day)."""
    from solutions import leaderboard

    started = time.perf_counter()
    solve(programmer, 0)
    if hasattr(leaderboard, "days_pass"):
        leaderboard.days_pass(windows)
    print(f"tomorrow made in {time.perf_counter() - started:.1f} s", flush=True)


def solves_while(preparing: threading.Thread, people: list) -> list[float]:
    """Solve, a programmer after another, until `preparing` is done: the times of those begun
    before it was."""
    times, n = [], 0
    while preparing.is_alive():
        n += 1
        started = time.perf_counter()
        solve(people[n % len(people)], n)
        times.append(time.perf_counter() - started)
    return times


if __name__ == "__main__":
    main()

"""`make contest-day`: a contest on the production stack, with faults, and the verdict.

    python -m loadtest.contest_day [--minutes M] [--programmers N] [--no-faults] [--latency-ms X]

Starts the stack (`stack.py`), seeds N programmers with a month of history through
`import_solves` and a running competition, runs the Locust scenario (`locustfile.py`) for M
minutes while the faults hit (MongoDB killed and back after 20 s, Redis restarted, a gunicorn
worker killed, the Celery worker killed and restarted), finishes every report a judge had not
been answered for (as a judge does, with the same id), then prints the report and, last, the
verdict line (`verdict/`). Exits non-zero unless nothing was lost or counted twice, no
response was a 500 and every board and both views of the standings equal the brute force.

Defaults come from CONTEST_DAY_MINUTES (10) and CONTEST_DAY_PROGRAMMERS (10,000). Everything the
run writes (the logs, Locust's CSV and HTML report, the site's mail) is kept in
var/contest-day/<time>/. PostgreSQL must answer on 127.0.0.1:5432 and redis-server be installed:
otherwise the run says so and stops (and fails under CI=true).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import requests

from . import browser, cpu, plan, server_top, verdict
from .stack import Stack, Unavailable
from .verdict.request_log import accepted_times
from .verdict.standings import check_standings
from .verdict.truth import read_jsonl, truth_from_log

ROOT = Path(__file__).resolve().parent.parent
# When each fault hits, as a share of the load's length.
FAULTS = [
    (0.25, "kill_mongodb"),
    (0.45, "restart_redis"),
    (0.55, "kill_gunicorn_worker"),
    (0.65, "kill_celery_worker"),
]
DRAIN_SECONDS = 120.0  # how long the driver keeps retrying what the judges left unanswered


def main(argv: list[str] | None = None) -> int:
    options = _arguments(argv)
    try:
        Stack.check_services()
    except Unavailable as why:
        print(f"contest day: cannot run: {why}.", flush=True)
        return 1 if os.environ.get("CI") == "true" else 0
    run_dir = ROOT / "var" / "contest-day" / dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir.mkdir(parents=True)
    stack = Stack(run_dir, latency_ms=options.latency_ms)
    try:
        return run(stack, options)
    except KeyboardInterrupt:
        print("contest day: interrupted", flush=True)
        return 130
    finally:
        stack.stop()


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--minutes", type=float, default=float(os.environ.get("CONTEST_DAY_MINUTES", 10))
    )
    parser.add_argument(
        "--programmers", type=int, default=int(os.environ.get("CONTEST_DAY_PROGRAMMERS", 10_000))
    )
    parser.add_argument("--faults", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument(
        "--latency-ms", type=float, default=0.0, help="added to every MongoDB round trip (a proxy)"
    )
    return parser.parse_args(argv)


def run(stack: Stack, options: argparse.Namespace) -> int:
    run_dir = stack.run_dir
    print(
        f"contest day: {options.programmers} programmers, {options.minutes:g} minutes, "
        f"faults {'on' if options.faults else 'off'}, MongoDB latency +{options.latency_ms:g}"
        f" ms; logs in {run_dir}",
        flush=True,
    )
    stack.start()
    world = _seeded_world(stack, options)
    load_average = os.getloadavg()
    load = _load(stack, world, options)
    print("  the load is over; finishing what the judges left unanswered", flush=True)
    _drain(world, run_dir)
    _drain_forms(world, run_dir)
    frozen = _frozen_view(world, run_dir)
    _wait_until(world.time("competition_end") + dt.timedelta(seconds=2))
    stack.python("loadtest.seed", str(run_dir), "released")  # the freeze's solves, on the boards
    result = verdict.report(world, run_dir, frozen_view=frozen)
    _cpu_print(load, run_dir)
    print(
        f"\nMachine: {os.cpu_count()} cores, load average {load_average[0]:.1f} before the "
        f"load and {os.getloadavg()[0]:.1f} after it."
    )
    print(result.line(), flush=True)
    return 0 if result.passed else 1


def _seeded_world(stack: Stack, options: argparse.Namespace) -> plan.World:
    """The world seeded: the programmers and their history first, then, the site started, the
    run and the competition scheduled from now and the competition seeded."""
    run_dir = stack.run_dir
    now = dt.datetime.now(dt.UTC)
    world = plan.World(
        base_url=stack.base_url,
        programmers=options.programmers,
        run_start=now.isoformat(),
        run_end=now.isoformat(),
        competition="contest-day",
        competition_start=now.isoformat(),
        competition_freeze=now.isoformat(),
        competition_end=now.isoformat(),
        log_dir=str(run_dir),
    )
    world.save(run_dir / "world.json")
    seeded = time.monotonic()
    stack.python("loadtest.seed", str(run_dir))
    print(f"  seeded in {time.monotonic() - seeded:.0f} s", flush=True)
    stack.start_site()
    # Read back: the seed wrote what it made (the judges' tokens, the watchers) into the world.
    world = _schedule(plan.World.load(run_dir / "world.json"), options.minutes)
    world.save(run_dir / "world.json")
    stack.python("loadtest.seed", str(run_dir), "competition")
    return world


def _schedule(world: plan.World, minutes: float) -> plan.World:
    start = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=5)
    begin, freeze, end = plan.competition_times(start, minutes)
    world.run_start = start.isoformat()
    world.run_end = (start + dt.timedelta(minutes=minutes)).isoformat()
    world.competition_start, world.competition_freeze = begin.isoformat(), freeze.isoformat()
    world.competition_end = end.isoformat()
    return world


@dataclass(frozen=True)
class Load:
    """The load's span (epoch seconds) and what each process of the stack spent in it."""

    began: float
    ended: float
    cpu: list[cpu.Usage]
    server_top: server_top.Totals


def _load(stack: Stack, world: plan.World, options: argparse.Namespace) -> Load:
    """The load, with the faults, and what each process spent meanwhile."""
    _wait_until(world.time("run_start"))
    seconds = options.minutes * 60
    locust = _locust(stack, world, seconds)
    began = time.time()
    watch = cpu.CpuWatch(
        lambda: {
            **stack.process_roles(),
            "Locust (the load)": cpu.process_tree(locust.pid),
            "this driver (faults, proxy)": [os.getpid()],
        }
    )
    watch.start()
    top = server_top.TopWatch(stack.mongodb_uri, stack.environment()["MONGODB_DB"])
    top.start()
    faults = threading.Thread(target=_faults, args=(stack, seconds, stack.over), daemon=True)
    if options.faults:
        faults.start()
    locust.wait()
    return Load(began, time.time(), watch.stop(), top.stop())


def _locust(stack: Stack, world: plan.World, seconds: float) -> subprocess.Popen:
    """Locust started on the scenario for `seconds`, its log and reports in the run's folder."""
    users = plan.VIEWERS + plan.JUDGES * plan.CONNECTIONS_PER_JUDGE + plan.FORM_PROGRAMMERS + 3
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "locust",
            "-f",
            str(ROOT / "loadtest" / "locustfile.py"),
            "--headless",
            "--users",
            str(users),
            "--spawn-rate",
            "100",
            "--run-time",
            f"{int(seconds)}s",
            "--host",
            world.base_url,
            "--only-summary",
            "--csv",
            str(stack.run_dir / "locust"),
            "--html",
            str(stack.run_dir / "locust.html"),
        ],
        env={**os.environ, "CONTEST_DAY_RUN_DIR": str(stack.run_dir)},
        stdout=(stack.run_dir / "locust.log").open("wb"),
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )


def _cpu_print(load: Load, run_dir: Path) -> None:
    """Where the cores went while the load ran, and what caps the embedded server: its commands
    share one interpreter, so its CPU an accepted solve (with every read the load brings) bounds
    the judges on a machine of any size."""
    seconds = load.ended - load.began
    accepted = sum(1 for t in accepted_times(run_dir) if load.began <= t <= load.ended)
    print(f"\n## CPU during the load (/proc, {seconds:.0f} s, {accepted} accepted solves)\n")
    for line in cpu.cpu_table(load.cpu, seconds, accepted):
        print(line)
    server = next((u for u in load.cpu if u.role.startswith("MongoDB")), None)
    if server and server.seconds and accepted:
        per_solve = server.seconds / accepted
        print(
            f"\nThe embedded server took {1000 * per_solve:.0f} ms of CPU an accepted solve "
            f"with this load's reads. Its commands share one interpreter, so about "
            f"{1 / per_solve:.0f} accepted solves a second fill its core, whatever the machine."
        )
    print("\nWhere the server's time went (its `top`; the solves' `bulkWrite`s are not in it):\n")
    for line in server_top.top_table(load.server_top, accepted):
        print(line)


def _faults(stack: Stack, seconds: float, over: threading.Event) -> None:
    begun = time.monotonic()
    for share, fault in FAULTS:
        time.sleep(max(0.0, begun + share * seconds - time.monotonic()))
        getattr(stack, fault)()
    # Stay until the run is over: the servers this thread restarted die with the thread that
    # started them (see tools.embedded_mongo._die_with_parent).
    over.wait()


def _drain(world: plan.World, run_dir: Path) -> None:
    """Retry, with the same id and body, every report the judges sent and were never answered
    (the load stopped them mid-retry): a judge keeps trying until it is told."""
    acks = read_jsonl(run_dir / "acks.jsonl")
    answered = {r["body"]["id"] for r in acks if r["event"] in ("answered", "refused")}
    pending = {r["body"]["id"]: r for r in acks if r["event"] == "sent"}
    session = browser.behind_proxy(requests.Session(), "192.0.2.1")
    deadline = time.monotonic() + DRAIN_SECONDS
    with (run_dir / "acks.jsonl").open("a") as log:
        for key, sent in pending.items():
            if key in answered:
                continue
            token = world.tokens[int(key.split("-")[0].removeprefix("judge")) % plan.JUDGES]
            while time.monotonic() < deadline:
                try:
                    answer = session.post(
                        world.base_url + sent["path"],
                        json=sent["body"],
                        headers={"Authorization": f"Bearer {token}"},
                        timeout=30,
                    )
                except requests.RequestException:
                    time.sleep(1)
                    continue
                if answer.status_code in (200, 201):
                    log.write(
                        json.dumps(
                            {
                                "t": time.time(),
                                "event": "answered",
                                "path": sent["path"],
                                "body": sent["body"],
                                "status": answer.status_code,
                                "answer": answer.json(),
                            }
                        )
                        + "\n"
                    )
                    break
                time.sleep(float(answer.headers.get("Retry-After", 1)))


def _drain_forms(world: plan.World, run_dir: Path) -> None:
    """Answer again, through the form, every right answer whose page the load cut off: the
    site either counts it now or says it already had (counted by the lost request)."""
    acks = read_jsonl(run_dir / "acks.jsonl")
    settled = {(r["handle"], r["problem"]) for r in acks if r["event"] == "form-accepted"}
    for sent in acks:
        pair = (sent.get("handle"), sent.get("problem"))
        if sent["event"] != "form-sent" or pair in settled:
            continue
        said = _answer_through_form(world, *pair)
        with (run_dir / "acks.jsonl").open("a") as log:
            log.write(
                json.dumps(
                    {
                        "t": time.time(),
                        "event": "form-accepted",
                        "handle": pair[0],
                        "problem": pair[1],
                        "at": sent["t"],
                        "counted": "counted on every board" in said,
                    }
                )
                + "\n"
            )
        settled.add(pair)


def _answer_through_form(world: plan.World, handle: str, slug: str) -> str:
    session = browser.behind_proxy(requests.Session(), "192.0.2.1")
    host = world.base_url.split("://", 1)[1]

    def post(path: str, fields: dict) -> requests.Response:
        form = session.get(world.base_url + path, timeout=30)
        token = session.cookies.get("csrftoken", "")
        return (
            session.post(
                world.base_url + path,
                timeout=30,
                data={"csrfmiddlewaretoken": token, **fields},
                headers={"Referer": f"https://{host}{path}"},
            )
            if form.ok
            else form
        )

    post("/accounts/login/", {"username": handle, "password": plan.PASSWORD})
    return post(f"/problems/{slug}/", {"answer": plan.answer_of(slug)}).text


def _frozen_view(world: plan.World, run_dir: Path) -> list[str]:
    """The public standings while frozen, checked before the competition ends."""
    if dt.datetime.now(dt.UTC) >= world.time("competition_end"):
        return [
            "frozen standings: not checked, the competition ended before the judges were "
            "all answered"
        ]
    truth = truth_from_log(world, run_dir)
    session = browser.behind_proxy(requests.Session(), "192.0.2.1")
    return check_standings(truth, world, session, final=False)


def _wait_until(moment: dt.datetime) -> None:
    time.sleep(max(0.0, (moment - dt.datetime.now(dt.UTC)).total_seconds()))


if __name__ == "__main__":
    sys.exit(main())

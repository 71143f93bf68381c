"""Contest day: the site keeps answering through faults, and the run that proves it is right.

The whole run (`make contest-day`) is a benchmark of minutes; its short form runs here under
CI, on the production stack with one fault of each kind. The checker it ends with is tested on
its own first: a verdict that could not fail would prove nothing.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from unittest import mock

import pytest
import requests
from django.http import HttpResponse
from pymongo import MongoClient
from pymongo.errors import AutoReconnect

from competitions import standings
from loadtest import cpu, plan, server_top
from loadtest.proxy import LatencyProxy
from loadtest.verdict.boards import compare_board, expected_scores, shared_ranks
from loadtest.verdict.request_log import endpoint_table, error_code, outage_windows
from loadtest.verdict.standings import compare_standings, icpc_rows
from loadtest.verdict.truth import Truth
from solutions import mongo, solve_slots
from solutions.api import errors
from solutions.leaderboard import reading
from solutions.views import refusals
from tests.conftest import NOW
from tests.services_available import require_postgres, require_redis
from tools.embedded_mongo import EmbeddedServer, free_port

ROOT = Path(__file__).resolve().parent.parent
START = dt.datetime(2026, 11, 25, 9, 0, tzinfo=dt.UTC)


def random_attempts(seed: int) -> list[tuple[str, str, bool, dt.datetime]]:
    rng = random.Random(seed)
    return [
        (
            f"coder{rng.randrange(12)}",
            rng.choice(plan.CONTEST_PROBLEMS[:4]),
            rng.random() < 0.4,
            START + dt.timedelta(seconds=rng.randrange(-120, 3 * 3600)),
        )
        for _ in range(rng.randrange(1, 120))
    ]


def served_like_the_site(attempts, *, freeze: dt.datetime | None, end: dt.datetime) -> dict:
    """The standings as the competitions app computes them, shaped like the API's answer."""
    ids = {handle: n for n, handle in enumerate(sorted({a[0] for a in attempts}))}
    inside = [a for a in attempts if START <= a[3] < end]
    seen = [
        standings.Attempt(ids[h], p, ok, at) for h, p, ok, at in inside if not freeze or at < freeze
    ]
    held = [
        standings.Attempt(ids[h], p, ok, at) for h, p, ok, at in inside if freeze and at >= freeze
    ]
    rows = standings.standings(
        seen,
        start=START,
        problems=plan.CONTEST_PROBLEMS,
        handles={n: h for h, n in ids.items()},
        held_back=held,
    )
    return {"rows": [row.to_dict() for row in rows]}


@pytest.mark.parametrize("seed", range(40))
def test_the_checkers_icpc_standings_agree_with_the_sites_on_random_attempts(seed):
    attempts = random_attempts(seed)
    end = START + dt.timedelta(hours=3)
    for freeze in (None, START + dt.timedelta(hours=2)):
        expected = icpc_rows(attempts, START, freeze, end)
        served = served_like_the_site(attempts, freeze=freeze, end=end)
        assert compare_standings("view", expected, served) == []


def test_the_checker_notices_a_wrong_penalty_and_a_missing_row():
    attempts = random_attempts(7) + [("late", plan.CONTEST_PROBLEMS[0], True, START)]
    end = START + dt.timedelta(hours=3)
    served = served_like_the_site(attempts, freeze=None, end=end)
    expected = icpc_rows(attempts, START, None, end)
    served["rows"][0]["penalty"] += 20
    served["rows"] = [row for row in served["rows"] if row["handle"] != "late"]
    differences = compare_standings("view", expected, served)
    assert any("late" in difference for difference in differences)
    assert any("rank/solved/penalty" in difference for difference in differences)


def test_the_checker_ranks_a_board_by_the_definition_and_notices_a_wrong_score():
    truth = Truth(
        solve_day={("ann", "a"): 100, ("ann", "b"): 94, ("bob", "a"): 99, ("cid", "a"): 90},
        groups={"ann": ("BD", ""), "bob": ("BD", "Acme"), "cid": ("IN", "")},
    )
    week = {"slug": "w", "window": "rolling", "window_days": 7, "metric": "solved"}
    assert expected_scores(truth, week, 100, ("everybody", "")) == {"ann": 2, "bob": 1}
    assert expected_scores(truth, week, 101, ("country", "BD")) == {"ann": 1, "bob": 1}
    assert shared_ranks({"ann": 2, "bob": 1, "cid": 1}) == {"ann": 1, "bob": 2, "cid": 2}
    rows = [{"rank": 1, "handle": "ann", "score": 2}, {"rank": 2, "handle": "bob", "score": 2}]
    assert compare_board(week, 100, ("everybody", ""), {"ann": 2, "bob": 1}, rows)


def test_a_busy_sites_refused_solves_do_not_stretch_an_outage_but_its_errors_do():
    """The verdict's "answering normally again": a solve refused as `solves_busy` (load shed as
    designed, at any time) is not a failure; a 503 of a storage fault or a dropped connection is."""
    faults = [
        {"fault": "mongodb", "phase": "begin", "t": 100.0},
        {"fault": "mongodb", "phase": "end", "t": 120.0},
    ]

    def log(*records: tuple[float, int, str | None]) -> list[dict]:
        return [
            {"t": t, "status": s, "retry_after": "1", **({"code": c} if c else {})}
            for t, s, c in records
        ]

    busy = log(
        (121.0, 503, "storage_unavailable"), (124.0, 503, "solves_busy"), (128, 503, "solves_busy")
    )
    assert outage_windows(busy, faults)[0]["normal"] == 121.0
    down = log((121.0, 503, "storage_unavailable"), (124.0, 503, None), (128.0, 0, None))
    assert outage_windows(down, faults)[0]["normal"] == 128.0
    table = "\n".join(endpoint_table([r | {"name": "POST solves", "ms": 5} for r in busy], []))
    assert "| 3 (3; 2 busy) |" in table


def received(response) -> requests.Response:
    """A site's response as the load generator receives it (Locust's are `requests`')."""
    answer = requests.Response()
    answer.status_code, answer._content = response.status_code, response.content
    answer.headers = requests.structures.CaseInsensitiveDict(response.headers)
    return answer


def test_the_load_generator_reads_the_answer_forms_busy_page_as_the_apis_busy_answer(
    mongodb, now, client
):
    """The answer form's refusal past the solve slots is HTML: the load generator takes its code
    from the page's header, so its busy 503s do not stretch an outage either (the Redis window
    of the 74b07ef run was 72 s for that alone); a storage fault's page is told as one."""
    page = refusals.busy_response(solve_slots.SolvesBusy(), back="/problems/p1/")
    assert (page.status_code, error_code(received(page))) == (503, "solves_busy")
    api = errors.error_response(503, "solves_busy", "busy", {"Retry-After": "1"})
    assert error_code(received(api)) == "solves_busy"
    with mock.patch.object(reading, "order_page", side_effect=AutoReconnect("lost")):
        down = client.get("/leaderboard/")
    assert (down.status_code, error_code(received(down))) == (503, "storage_unavailable")
    assert error_code(received(HttpResponse("<h1>Bad gateway</h1>", status=502))) is None


def test_a_board_page_answers_while_redis_is_down(settings, mongodb, client):
    """The cache misses instead of failing: a Redis restart on contest day answered 500s."""
    dead = f"redis://127.0.0.1:{free_port()}/0"
    settings.CACHES = {
        "default": {"BACKEND": "leaderboard_site.cache.ForgivingRedisCache", "LOCATION": dead}
    }
    assert client.get("/leaderboard/").status_code == 200
    assert client.get("/api/v1/boards").status_code == 200


def test_a_storage_fault_answers_at_once_while_the_driver_knows_the_server_is_down(
    settings, db, tmp_path
):
    """After the first fault the next requests do not each wait for a server selection:
    hundreds of polls a second would fill every worker's threads with waiting."""
    with EmbeddedServer(storage=str(tmp_path / "mongo")) as server:
        settings.MONGODB_URI, settings.MONGODB_SERVER_TIMEOUT_MS = server.uri, 30_000
        settings.MONGODB_DB = "leaderboard_fail_fast"
        mongo.set_client(None)
        try:
            mongo.board_versions().find_one({})
            server.kill()
            with pytest.raises(AutoReconnect):
                mongo.board_versions().find_one({})  # finds the server gone
            began = time.monotonic()
            with pytest.raises(AutoReconnect):
                mongo.board_versions().find_one({})
            assert time.monotonic() - began < 5  # not the 30 s of a server selection
            server.start()
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:  # the driver's monitor finds it again
                try:
                    mongo.board_versions().find_one({})
                    break
                except AutoReconnect:
                    time.sleep(0.2)
            else:
                pytest.fail("the site did not see the server come back")
        finally:
            mongo.get_client().close()
            mongo.set_client(None)


def test_the_servers_top_counts_the_commands_of_the_load_across_a_restart(tmp_path):
    """The run's table of the server's time: the finds of the load on each collection, those
    before the watch left out, and those of the server that came back after a kill added to
    those of the one killed."""
    with EmbeddedServer(storage=str(tmp_path / "mongo")) as server:
        client = MongoClient(server.uri, serverSelectionTimeoutMS=20_000)

        def finds(collection: str, n: int) -> None:
            for _ in range(n):
                client.run_top[collection].find_one({"_id": 1})

        for collection in ("boards", "attempts"):  # `top` lists the collections there are
            client.run_top[collection].insert_one({"_id": 1})
        finds("boards", 5)  # before the load
        watch = server_top.TopWatch(server.uri, "run_top")
        watch.start()
        finds("boards", 3)
        finds("attempts", 2)
        watch._sample()  # the watch's reading before the fault
        server.kill()
        server.start()
        finds("boards", 4)
        totals = watch.stop()
        client.close()
    assert totals[("boards", "queries", "n")] == 7
    assert totals[("attempts", "queries", "n")] == 2
    table = server_top.top_table(totals, accepted=2)
    assert any(line.startswith("| boards | queries | ") and "| 3.50 |" in line for line in table)


def _echo_server() -> tuple[socket.socket, int]:
    """A TCP server on loopback that sends back whatever one connection sends it."""
    listener = socket.create_server(("127.0.0.1", 0))

    def echo() -> None:
        connection, _ = listener.accept()
        with connection:
            while data := connection.recv(65536):
                connection.sendall(data)

    threading.Thread(target=echo, daemon=True).start()
    return listener, listener.getsockname()[1]


def _round_trip(connection: socket.socket, size: int) -> float:
    started = time.monotonic()
    connection.sendall(b"x" * size)
    received = 0
    while received < size:
        received += len(connection.recv(65536))
    return time.monotonic() - started


def test_the_latency_proxy_adds_its_delay_once_per_round_trip_whatever_the_message_size():
    listener, port = _echo_server()
    proxy = LatencyProxy(target=("127.0.0.1", port), delay_seconds=0.2)
    try:
        with socket.create_connection(("127.0.0.1", proxy.port)) as connection:
            small = _round_trip(connection, 100)
            large = _round_trip(connection, 4_000_000)  # dozens of chunks: still one delay
    finally:
        proxy.stop()
        listener.close()
    assert small >= 0.2 and large >= 0.2
    assert large < 2 * 0.2 + 1.0, large  # a delay per chunk would be 60 x 0.2 s or more


def _burner(cpu_seconds: float) -> subprocess.Popen:
    """A process that spends this much CPU, then waits for its stdin to close."""
    code = (
        "import sys, time\n"
        f"end = time.process_time() + {cpu_seconds}\n"
        "while time.process_time() < end: pass\n"
        "sys.stdin.read()\n"
    )
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)


def _spent(process: subprocess.Popen, at_least: float) -> None:
    while (reading := cpu.cpu_seconds(process.pid)) is None or reading[1] < at_least:
        time.sleep(0.05)


def test_the_cpu_table_counts_only_the_span_with_processes_born_and_gone_inside_it():
    """A run's CPU table: what a process spent before the load is not the load's; one started
    during it (a restarted server) counts whole, and one killed during it keeps what it spent."""
    before = _burner(0.5)
    _spent(before, 0.5)
    roles = {"old": [before.pid]}
    watch = cpu.CpuWatch(lambda: roles)
    watch.start()
    born = _burner(0.6)
    roles["restarted"] = [born.pid]
    _spent(born, 0.6)
    time.sleep(2.5 * cpu.SAMPLE_SECONDS)  # sampled at least twice since
    born.stdin.close()
    born.wait()
    usage = {u.role: u for u in watch.stop()}
    before.stdin.close()
    before.wait()
    assert usage["restarted"].seconds >= 0.55 and usage["restarted"].processes == 1
    assert usage["old"].seconds < 0.3  # it only waited inside the span
    table = cpu.cpu_table(list(usage.values()), seconds=10.0, accepted=4)
    restarted = next(line for line in table if line.startswith("| restarted |"))
    assert restarted.split(" | ")[3].removesuffix(" |").isdigit()  # ms an accepted solve
    assert table[-1].startswith("| all | ")


@pytest.mark.slow
def test_a_short_contest_day_loses_nothing_counts_nothing_twice_and_answers_no_500():
    """`make contest-day` in short: 2 minutes, 2,000 programmers, one fault of each kind."""
    require_postgres()
    require_redis()
    run = subprocess.run(
        [sys.executable, "-m", "loadtest.contest_day", "--minutes", "2", "--programmers", "2000"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1500,
        env={**os.environ, "CONTEST_DAY_MINUTES": "2"},
    )
    lines = run.stdout.strip().splitlines()
    print(run.stdout[-6000:], run.stderr[-3000:])
    assert lines and lines[-1].startswith("contest day: "), run.stderr[-3000:]
    assert " 0 lost, 0 counted twice, 0 responses 500, boards equal: yes" in lines[-1]
    assert run.returncode == 0
    for fault in ("mongodb", "redis", "gunicorn-worker", "celery-worker"):
        assert f"- {fault} at +" in run.stdout
    for endpoint in ("POST solves", "board live (200)", "answer (form)"):
        assert f"| {endpoint} | " in run.stdout  # the load generator's log has every request
    for process in ("gunicorn (master and workers)", "MongoDB (embedded server)", "Locust"):
        assert f"| {process}" in run.stdout  # where the cores went, from /proc
    # The server's own account by collection: the boards' orders are read on every board page.
    assert "| collection | commands | share of the time |" in run.stdout
    assert "| orders | queries | " in run.stdout


def test_public_standings_are_rendered_once_per_change_for_every_anonymous_viewer(
    mongodb, now, problems, alice, bob, monkeypatch
):
    """Hundreds of viewers poll the standings on contest day; each rendering reads every
    attempt. An attempt or a hide shows within seconds all the same."""
    from django.test import Client

    from competitions import attempts as competition_attempts
    from competitions import selectors as competition_selectors
    from competitions import services as competition_services
    from solutions import services as solution_services

    contest = competition_services.competition_create(
        slug="spring",
        title="Spring",
        start=NOW - dt.timedelta(hours=1),
        end=NOW + dt.timedelta(hours=2),
        problems=problems[:2],
    )
    reads = []
    real = competition_attempts.every
    monkeypatch.setattr(
        competition_attempts,
        "every",
        lambda **kwargs: reads.append(1) or real(**kwargs),
    )

    def report(handle: str, minute: int) -> None:
        competition_services.judge_submission_report(
            key=f"{handle}-{minute}",
            handle=handle,
            problem_slug=problems[0].slug,
            accepted=True,
            submitted_at=contest.start + dt.timedelta(minutes=minute),
        )

    live = "/competitions/spring/standings/live/"
    report("Alice", 5)
    assert all("Alice" in Client().get(live).text for _ in range(3))
    assert len(reads) == 1
    report("bob", 7)
    report("bob", 8)
    now.shift(competition_selectors.CACHED_STANDINGS_VERSION_SECONDS)  # read again then
    assert "bob" in Client().get(live).text and len(reads) == 2
    solution_services.programmer_set_visibility(programmer=alice, hidden=True)
    now.shift(competition_selectors.CACHED_STANDINGS_VERSION_SECONDS)
    assert "Alice" not in Client().get(live).text

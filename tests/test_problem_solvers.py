"""Every solver of a problem, a page at a time (issue 38, part 3): the problem's page and
`GET /api/v1/problems/<slug>/solvers?page=` list everybody the count counts, in solve order,
whatever the retries, hides, bans and returns, frozen solves only once released, at a cost that
does not grow with the solvers.

Personas as in conftest; "now" is 2020-01-19 12:00 UTC.
"""

from __future__ import annotations

import datetime as dt
import random
import re

import bson
import pytest
import time_machine
from bson import ObjectId
from django.test import Client
from pymongo import MongoClient
from pymongo.errors import ClientBulkWriteException

from competitions import services as competition_services
from competitions.tasks import archive_finished_competitions_task
from solutions import mongo, selectors, services, solver_pages, solvers
from solutions.models import Problem, Programmer
from tests.conftest import NOW, crash_in_a_solves_first_write, make_programmer
from tests.support.commands import CommandLog


def brute_solvers(problem: Problem) -> list[tuple[str, dt.datetime]]:
    """(handle, solved at) of everybody the count should count, from the log and the flags as
    they are now: on the boards, not held, earliest first, then by programmer id."""
    visible = {p.pk: p.handle for p in Programmer.objects.filter(hidden=False, banned=False)}
    log = [
        s
        for s in mongo.solves().find({"problem": problem.slug})
        if s["programmer_id"] in visible and "held_until" not in s
    ]
    log.sort(key=lambda s: (s["solved_at"], s["programmer_id"]))
    return [(visible[s["programmer_id"]], s["solved_at"]) for s in log]


def api_solvers(client: Client, problem: Problem) -> list[tuple[str, dt.datetime]]:
    """Every page of the API, in order, checked to be whole pages but the last."""
    first = client.get(f"/api/v1/problems/{problem.slug}/solvers").json()
    listed = []
    for number in range(1, first["pages"] + 1):
        page = client.get(f"/api/v1/problems/{problem.slug}/solvers", {"page": number}).json()
        assert page["page"] == number and page["pages"] == first["pages"]
        if number < page["pages"]:
            assert len(page["solvers"]) == 50
        numbers = [row["number"] for row in page["solvers"]]
        assert numbers == list(range(50 * (number - 1) + 1, 50 * (number - 1) + 1 + len(numbers)))
        listed += [
            (row["handle"], dt.datetime.fromisoformat(row["solved_at"])) for row in page["solvers"]
        ]
    assert first["count"] == len(listed)
    return listed


def paged(problem: Problem, page_size: int) -> list[tuple[str, dt.datetime]]:
    """Every page of the selector at a small page size, so few solvers make many pages."""
    first = selectors.problem_solvers_page(problem=problem, page=1, page_size=page_size)
    rows = []
    for number in range(1, first.pages + 1):
        page = selectors.problem_solvers_page(problem=problem, page=number, page_size=page_size)
        assert page.total == first.total
        rows += [(row.handle, row.solved_at) for row in page.rows]
    return rows


# --- against the log -------------------------------------------------------------------------


def test_random_histories_list_every_solver_in_solve_order_as_the_log_says(mongodb, boards, client):
    rng = random.Random(38)
    problems = [Problem.objects.create(slug=f"q{i}", title=f"Q {i}") for i in range(3)]
    programmers = [make_programmer(f"coder{i}", country="BD") for i in range(24)]
    start = dt.datetime(2020, 3, 1, 5, 30, tzinfo=dt.UTC)
    events = []
    for programmer in programmers:
        for problem in rng.sample(problems, rng.randrange(1, 4)):
            solved_at = start + dt.timedelta(seconds=rng.randrange(6 * 86400))
            late = dt.timedelta(hours=rng.randrange(1, 72) if rng.random() < 0.3 else 0)
            events.append((solved_at + late, "solve", programmer, problem, solved_at))
        for _ in range(rng.randrange(3)):
            events.append(
                (
                    start + dt.timedelta(seconds=rng.randrange(8 * 86400)),
                    "flag",
                    programmer,
                    None,
                    None,
                )
            )
    events.sort(key=lambda e: (e[0], e[1]))
    for reported_at, kind, programmer, problem, solved_at in events:
        with time_machine.travel(reported_at, tick=False):
            programmer.refresh_from_db()
            if kind == "solve":
                request = f"{programmer.pk}-{problem.slug}"
                services.solve_record(
                    programmer=programmer, problem=problem, solved_at=solved_at, request=request
                )
                if rng.random() < 0.3:  # the judge retries: nothing more
                    services.solve_record(
                        programmer=programmer, problem=problem, solved_at=solved_at, request=request
                    )
            else:
                flag = rng.choice(["hidden", "banned"])
                services.programmer_set_visibility(
                    programmer=programmer, **{flag: not getattr(programmer, flag)}
                )
                assert paged(problems[0], 4) == brute_solvers(problems[0])
    with time_machine.travel(events[-1][0], tick=False):
        for problem in problems:
            assert paged(problem, 3) == brute_solvers(problem)
            assert paged(problem, 50) == brute_solvers(problem)
            assert api_solvers(client, problem) == brute_solvers(problem)


def test_sixty_solvers_make_two_pages_on_the_problem_page_and_the_api(
    mongodb, now, boards, problems, client
):
    p1 = problems[0]
    crowd = [make_programmer(f"solver{i:02}") for i in range(60)]
    for minutes, programmer in enumerate(reversed(crowd)):  # solver59 solved first
        services.solve_record(
            programmer=programmer, problem=p1, solved_at=NOW - dt.timedelta(minutes=100 - minutes)
        )
    first = client.get("/problems/p1/")
    second = client.get("/problems/p1/?page=2")
    assert "60 solvers, page 1 of 2." in first.text
    assert 'href="?page=2"' in first.text
    listed = re.compile(r'<td class="rank">(\d+)</td><td class="who">\s*<a href="/u/(\w+)/">')
    assert listed.findall(first.text)[:2] == [("1", "solver59"), ("2", "solver58")]
    assert len(listed.findall(first.text)) == 50
    assert listed.findall(second.text) == [(str(51 + i), f"solver{9 - i:02}") for i in range(10)]
    answer = client.get("/api/v1/problems/p1/solvers", {"page": 2}).json()
    assert (answer["count"], answer["page"], answer["pages"]) == (60, 2, 2)
    assert answer["solvers"][0]["handle"] == "solver09"
    assert answer["solvers"][-1] == {
        "number": 60,
        "handle": "solver00",
        "country": "",
        "solved_at": "2020-01-19T11:19:00Z",
    }


def test_the_api_gives_each_solvers_country_and_a_problem_nobody_solved_one_empty_page(
    mongodb, now, boards, problems, alice, bob, client
):
    services.solve_record(
        programmer=bob, problem=problems[0], solved_at=NOW - dt.timedelta(hours=2)
    )
    services.solve_record(programmer=alice, problem=problems[0], solved_at=NOW)
    answer = client.get("/api/v1/problems/p1/solvers").json()
    assert [(s["handle"], s["country"]) for s in answer["solvers"]] == [
        ("bob", "IN"),
        ("Alice", "BD"),
    ]
    assert client.get("/api/v1/problems/p2/solvers").json() == {
        "problem": "p2",
        "count": 0,
        "page": 1,
        "page_size": 50,
        "pages": 1,
        "solvers": [],
    }


# --- exactly once ----------------------------------------------------------------------------


def test_a_crash_between_the_counts_and_the_chunk_lists_the_solver_once_after_a_retry(
    mongodb, now, boards, problems, alice, bob, monkeypatch
):
    p1 = problems[0]
    crash_in_a_solves_first_write(monkeypatch, -2, OSError())  # counted, not listed nor marked
    with pytest.raises(OSError):
        services.solve_record(programmer=alice, problem=p1, solved_at=NOW, request="a")
    with pytest.raises(OSError):
        services.solve_record(programmer=bob, problem=p1, solved_at=NOW, request="b")
    monkeypatch.undo()
    assert selectors.problem_solvers_page(problem=p1, page=1).rows == []  # counted, not listed
    assert services.solve_record(programmer=alice, problem=p1, solved_at=NOW, request="a")
    now.shift(dt.timedelta(minutes=3))
    services.solves_repair()  # Bob's is finished by the repair task
    services.solves_repair()
    stale = mongo.solves().find_one({"programmer_id": bob.pk})
    mongo.problem_solvers().update_one(*solvers._chunk_change(stale, add=True))  # a late finish
    assert paged(p1, 50) == brute_solvers(p1) and len(brute_solvers(p1)) == 2


def levels(slug: str, solved_at: dt.datetime) -> tuple[int, int, int, list[int]]:
    """Where a solve made at `solved_at` counts: (the problem's count, its day's count, the day
    index's count of its minute, who its minute's chunk lists)."""
    day, minute = solvers.day_minute(solved_at)
    stats = mongo.problem_stats().find_one({"_id": slug}) or {}
    index = mongo.problem_days().find_one({"_id": solvers.day_id(slug, day)}) or {}
    chunk = mongo.problem_solvers().find_one({"_id": solvers.chunk_id(slug, day, minute)}) or {}
    return (
        stats.get("solvers", 0),
        stats.get("days", {}).get(str(day), 0),
        index.get("m", {}).get(str(minute), 0),
        [entry["p"] for entry in chunk.get("s", [])],
    )


def a_finisher_first_at_the_day_index(monkeypatch) -> list[tuple[int, int]]:
    """Each new solve's move meets its op in the day index already (another finisher of the
    same move got there first), so its first command stops there. Returns what the commands
    refused: (where from the end of the command, error code)."""
    refused: list[tuple[int, int]] = []
    real_move_writes, real_write_together = solvers.move_writes, mongo.write_together

    def raced(solve: dict) -> list:
        writes = real_move_writes(solve)
        mongo.write_together(writes[1:2])  # in order: the count, the day index, the chunk, ...
        return writes

    def watched(writes: list) -> None:
        try:
            real_write_together(writes)
        except ClientBulkWriteException as error:
            refused.extend((e["idx"] - len(writes), e["code"]) for e in error.write_errors)
            raise

    monkeypatch.setattr(solvers, "move_writes", raced)
    monkeypatch.setattr(mongo, "write_together", watched)
    return refused


def test_a_move_finished_twice_counts_once_in_the_count_and_the_day_index(
    mongodb, now, boards, problems, alice, bob, monkeypatch
):
    p1 = problems[0]
    refused = a_finisher_first_at_the_day_index(monkeypatch)
    assert services.solve_record(programmer=alice, problem=p1, solved_at=NOW)
    monkeypatch.undo()
    assert refused == [(-3, 11000)]  # the day index's upsert stopped the chunk and the mark
    assert levels(p1.slug, NOW) == (1, 1, 1, [alice.pk])
    # Bob's goes through whole; then each move is finished again, twice, by whoever still
    # holds it (a judge's retry, the repair task): nothing more.
    services.solve_record(programmer=bob, problem=p1, solved_at=NOW)
    ops = mongo.problem_days().find_one()["ops"]  # Alice's, then Bob's
    for programmer, op in zip((alice, bob), ops, strict=True):
        logged = mongo.solves().find_one({"programmer_id": programmer.pk})
        assert logged["problem_counted"] is True and "problem_move" not in logged
        for _ in range(2):
            solvers.move_finish({**logged, "problem_move": op})
    assert levels(p1.slug, NOW) == (2, 2, 2, sorted([alice.pk, bob.pk]))
    services.programmer_set_visibility(programmer=bob, hidden=True)
    out = mongo.problem_days().find_one()["ops"][-1]
    assert out.startswith(solvers.REMOVE)
    logged = mongo.solves().find_one({"programmer_id": bob.pk})
    for _ in range(2):
        solvers.move_finish({**logged, "problem_move": out})
    assert levels(p1.slug, NOW) == (1, 1, 1, [alice.pk])
    assert_bounded_and_agreeing()


def test_a_rebuild_from_the_log_gives_the_same_pages(
    mongodb, now, boards, problems, alice, bob, charlie
):
    for hours, programmer in enumerate([charlie, alice, bob]):
        services.solve_record(
            programmer=programmer, problem=problems[0], solved_at=NOW - dt.timedelta(days=hours)
        )
    services.programmer_set_visibility(programmer=alice, banned=True)
    before = paged(problems[0], 2)
    mongo.problem_solvers().delete_many({})
    mongo.problem_stats().delete_many({})
    services.boards_rebuild_all()
    assert paged(problems[0], 2) == before == brute_solvers(problems[0])
    assert [handle for handle, _ in before] == ["bob", "charlie"]
    services.programmer_set_visibility(programmer=alice, banned=False)
    assert [handle for handle, _ in paged(problems[0], 2)] == ["bob", "Alice", "charlie"]


def test_a_frozen_competitions_solve_is_listed_only_once_it_is_released(
    mongodb, now, boards, problems, alice, bob, client
):
    start, freeze, end = (
        NOW - dt.timedelta(hours=3),
        NOW - dt.timedelta(hours=1),
        NOW + dt.timedelta(hours=2),
    )
    competition_services.competition_create(
        slug="cup", title="Cup", start=start, end=end, freeze_at=freeze, problems=problems[:1]
    )
    services.solve_record(
        programmer=alice, problem=problems[0], solved_at=freeze - dt.timedelta(minutes=5)
    )
    services.solve_record(programmer=bob, problem=problems[0], solved_at=NOW)  # after the freeze
    listed = client.get("/api/v1/problems/p1/solvers").json()
    assert [s["handle"] for s in listed["solvers"]] == ["Alice"] and listed["count"] == 1
    assert ">bob</a>" not in client.get("/problems/p1/").text
    with time_machine.travel(end + dt.timedelta(minutes=1), tick=False):
        archive_finished_competitions_task()
        listed = client.get("/api/v1/problems/p1/solvers").json()
        assert [s["handle"] for s in listed["solvers"]] == ["Alice", "bob"]


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize("page", ["0", "-1", "abc", "1.5", "1000001"])
def test_a_page_that_is_no_page_number_is_a_clear_400(mongodb, now, boards, problems, client, page):
    answer = client.get("/api/v1/problems/p1/solvers", {"page": page})
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_parameter"
    shown = client.get("/problems/p1/", {"page": page})
    assert shown.status_code == 400 and "Pages are numbered from 1." in shown.text


def test_a_page_past_the_last_or_an_unknown_problem_is_404(
    mongodb, now, boards, problems, alice, client
):
    services.solve_record(programmer=alice, problem=problems[0], solved_at=NOW)
    answer = client.get("/api/v1/problems/p1/solvers", {"page": 2})
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "page_out_of_range"
    assert client.get("/problems/p1/?page=2").status_code == 404
    unknown = client.get("/api/v1/problems/nope/solvers")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_problem"


# --- cost ------------------------------------------------------------------------------------


def _middle_page_commands(size: int, embedded_server, problem: Problem) -> tuple[list, set]:
    """((collection, reply bytes) of each command, the (day, minute)s of its solvers) of
    reading the middle page of `size` solvers of `problem` spread over 20 days."""
    Programmer.objects.all().delete()
    mongo.solves().delete_many({})
    crowd = Programmer.objects.bulk_create([Programmer(handle=f"crowd{i:05}") for i in range(size)])
    rng = random.Random(size)
    services.solves_import(
        solves=[(p, problem, NOW - dt.timedelta(seconds=rng.randrange(20 * 86400))) for p in crowd]
    )
    log = CommandLog(on=False)
    previous = mongo.get_client()
    client = MongoClient(embedded_server.uri, tz_aware=True, event_listeners=[log])
    mongo.set_client(client)
    try:
        middle = max(1, size // 100)
        selectors.problem_solvers_page(problem=problem, page=middle)  # the client's first use
        with log.recording():
            page = selectors.problem_solvers_page(problem=problem, page=middle)
        assert len(page.rows) == 50 and page.total == size
    finally:
        mongo.set_client(previous)
        client.close()
    assert {c.name for c in log.commands} == {"find"}
    spans = {solvers.day_minute(row.solved_at) for row in page.rows}
    return [(c.document["find"], c.received) for c in log.commands], spans


def test_a_middle_page_costs_four_finds_at_most_and_the_same_bytes_at_any_number_of_solvers(
    mongodb, embedded_server, now, boards, problems
):
    small, small_spans = _middle_page_commands(200, embedded_server, problems[0])
    large, _ = _middle_page_commands(3000, embedded_server, problems[0])
    # 200 solvers over 20 days: the page spans several days and many minutes.
    assert len({day for day, _ in small_spans}) >= 3 and len(small_spans) >= 40
    # The day counts, the days' indexes, then the page's chunks (one minute or more).
    for commands in (small, large):
        assert 3 <= len(commands) <= 4
        assert [name for name, _ in commands[:2]] == ["problem_stats", "problem_days"]
    # The page's bytes do not grow with the solvers; the indexes of the days it spans are at
    # most a full day's each.
    assert sum(size for _, size in large[2:]) <= sum(size for _, size in small[2:]) + 1024
    assert large[1][1] <= 2 * index_bytes_max()


# --- bounded documents -----------------------------------------------------------------------


def index_bytes_max() -> int:
    """The bytes of a day index at its largest: a count for every minute, OPS_KEPT ops."""
    full = {
        "_id": f"{'x' * 40}|{solvers.day_minute(NOW)[0]}",
        "m": {str(minute): 2**31 - 1 for minute in range(solvers.MINUTES_A_DAY)},
        "ops": [f"+{ObjectId()}" for _ in range(solvers.OPS_KEPT)],
    }
    return len(bson.encode(full))


def assert_bounded_and_agreeing() -> None:
    """Each chunk lists, sorted and once each, the solvers of the one minute its `_id` names;
    each day index counts at most 1,440 minutes and keeps OPS_KEPT ops; and the three levels
    agree: a minute's count is its chunk's length, a day's count on the problem's document the
    sum of its index's."""
    chunks, minutes, days = {}, {}, {}
    for chunk in mongo.problem_solvers().find():
        slug, day, minute = chunk["_id"].rsplit("|", 2)
        listed = chunk["s"]
        assert {solvers.day_minute(e["at"]) for e in listed} <= {(int(day), int(minute))}
        assert listed == sorted(listed, key=lambda e: (e["at"], e["p"]))
        assert len({e["p"] for e in listed}) == len(listed)
        chunks[slug, int(day), int(minute)] = len(listed)
    for index in mongo.problem_days().find():
        slug, day = index["_id"].rsplit("|", 1)
        assert len(index["m"]) <= solvers.MINUTES_A_DAY and len(index["ops"]) <= solvers.OPS_KEPT
        assert all(0 <= int(minute) < solvers.MINUTES_A_DAY for minute in index["m"])
        minutes |= {(slug, int(day), int(minute)): n for minute, n in index["m"].items()}
        days[slug, int(day)] = sum(index["m"].values())
    counted = {
        (stats["_id"], int(day)): n
        for stats in mongo.problem_stats().find()
        for day, n in stats.get("days", {}).items()
    }
    assert {k: n for k, n in chunks.items() if n} == {k: n for k, n in minutes.items() if n}
    assert {k: n for k, n in days.items() if n} == {k: n for k, n in counted.items() if n}


def test_a_day_with_a_solver_every_minute_has_one_index_of_1440_counts_under_20_kb(mongodb):
    day_start = dt.datetime(2020, 1, 18, tzinfo=dt.UTC)
    build = solvers.StatsBuild()
    build.add(
        [
            {
                "_id": ObjectId(),
                "problem": "p1",
                "programmer_id": n,
                "solved_at": day_start + dt.timedelta(seconds=20 * n),
                "problem_counted": True,
            }
            for n in range(3 * solvers.MINUTES_A_DAY)  # three a minute, all day
        ],
        counted=True,
    )
    build.finish()
    (index,) = mongo.problem_days().find()
    assert len(index["m"]) == solvers.MINUTES_A_DAY and set(index["m"].values()) == {3}
    assert mongo.problem_solvers().count_documents({}) == solvers.MINUTES_A_DAY
    assert_bounded_and_agreeing()
    assert index_bytes_max() < 20_000  # what the module docstring says of the largest
    page = solver_pages.solvers_page(slug="p1", offset=1000, limit=50)
    assert [s.programmer_id for s in page.solvers] == list(range(1000, 1050))


# --- chunks per minute, against the log ------------------------------------------------------


def counted_solvers(slug: str) -> list[tuple[int, dt.datetime]]:
    """(programmer id, solved at) of every solve the count should count, from the log and the
    flags as they are now, by time then programmer id."""
    visible = set(
        Programmer.objects.filter(hidden=False, banned=False).values_list("pk", flat=True)
    )
    counted = [
        (s["programmer_id"], s["solved_at"])
        for s in mongo.solves().find({"problem": slug})
        if s["programmer_id"] in visible and "held_until" not in s
    ]
    return sorted(counted, key=lambda solve: (solve[1], solve[0]))


def every_page(slug: str, limit: int) -> list[tuple[int, dt.datetime]]:
    """Every page of `limit` solvers, each checked to be whole but the last."""
    total = solver_pages.solvers_page(slug=slug, offset=0, limit=limit).total
    listed = []
    for offset in range(0, total, limit):
        page = solver_pages.solvers_page(slug=slug, offset=offset, limit=limit)
        assert page.total == total and len(page.solvers) == min(limit, total - offset)
        listed += [(s.programmer_id, s.at) for s in page.solvers]
    return listed


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_page_of_every_size_is_the_log_in_solve_order_over_days_and_minutes(
    mongodb, boards, seed
):
    rng = random.Random(seed)
    problem = Problem.objects.create(slug="busy", title="Busy")
    programmers = [make_programmer(f"racer{i}") for i in range(40)]
    start = dt.datetime(2020, 3, 1, 23, 50, tzinfo=dt.UTC)  # ten minutes before a UTC midnight
    busy = start + dt.timedelta(minutes=12)  # the minute a third of them solve in
    events = []
    for programmer in programmers:
        if rng.random() < 0.4:  # in the busy minute, some at its very first moment (a tie)
            solved_at = busy + dt.timedelta(milliseconds=rng.choice([0, rng.randrange(60_000)]))
        else:
            solved_at = start + dt.timedelta(seconds=rng.randrange(3 * 86400))
        late = dt.timedelta(minutes=rng.randrange(1, 900) if rng.random() < 0.3 else 0)
        events.append((solved_at + late, "solve", programmer, solved_at))
        for _ in range(rng.randrange(3)):  # hidden or banned, and back
            flag_at = start + dt.timedelta(seconds=rng.randrange(4 * 86400))
            events.append((flag_at, "flag", programmer, None))
    events.sort(key=lambda e: (e[0], e[1]))
    for reported_at, kind, programmer, solved_at in events:
        with time_machine.travel(reported_at, tick=False):
            programmer.refresh_from_db()
            if kind == "solve":
                services.solve_record(programmer=programmer, problem=problem, solved_at=solved_at)
                continue
            flag = rng.choice(["hidden", "banned"])
            services.programmer_set_visibility(
                programmer=programmer, **{flag: not getattr(programmer, flag)}
            )
            assert every_page("busy", 7) == counted_solvers("busy")
    expected = counted_solvers("busy")
    assert len({solvers.day_minute(at)[0] for _, at in expected}) >= 3
    in_busy = {"$gte": busy, "$lt": busy + dt.timedelta(minutes=1)}
    assert mongo.solves().count_documents({"solved_at": in_busy}) >= 8  # many in one minute
    assert len([at for _, at in expected if busy <= at < busy + dt.timedelta(minutes=1)]) >= 3
    for limit in range(1, len(expected) + 2):
        assert every_page("busy", limit) == expected
    assert_bounded_and_agreeing()

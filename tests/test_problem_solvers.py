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

import pytest
import time_machine
from django.test import Client
from pymongo import MongoClient

from competitions import services as competition_services
from competitions.tasks import archive_finished_competitions_task
from solutions import mongo, selectors, services, solvers
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


def test_a_crash_between_the_count_and_the_part_lists_the_solver_once_after_a_retry(
    mongodb, now, boards, problems, alice, bob, monkeypatch
):
    p1 = problems[0]
    crash_in_a_solves_first_write(monkeypatch, -2, OSError())  # counted, neither listed nor marked
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
    solvers._part_apply(stale, add=True)  # a late finish of the same move: nothing more
    assert paged(p1, 50) == brute_solvers(p1) and len(brute_solvers(p1)) == 2


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


def _middle_page_commands(size: int, embedded_server, problem: Problem) -> list[tuple[str, int]]:
    """(command, reply bytes) of reading the middle page of `size` solvers of `problem`."""
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
    return [(c.name, c.received) for c in log.commands]


def test_a_middle_page_costs_the_same_commands_and_bytes_at_any_number_of_solvers(
    mongodb, embedded_server, now, boards, problems
):
    small = _middle_page_commands(200, embedded_server, problems[0])
    large = _middle_page_commands(3000, embedded_server, problems[0])
    # The day counts, then the page's parts (one day or more): three finds at most, either way.
    for commands in (small, large):
        assert 2 <= len(commands) <= 3 and {name for name, _ in commands} == {"find"}
    assert sum(size for _, size in large) <= sum(size for _, size in small) + 1024

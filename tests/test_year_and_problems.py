"""A year of solving on the profile, and problem statistics (issue 23, parts 2 and 3).

Each number is checked against a brute-force computation over the `solves` log on random
histories (late solves, gaps, hides and bans, several time zones): a programmer's solve days in
the last 365, active days, current streak (alive until the end of the next day) and longest
streak; each problem's solver count, first and latest solvers. A retried or repeated solve, and a
crash in the middle of counting one, count once. The pages and the API show the same numbers, and
what they cost does not grow with the number of programmers.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from io import StringIO
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from pymongo import MongoClient

from solutions import leaderboard, mongo, selectors, services, solvers
from solutions.leaderboard import streaks
from solutions.models import Problem, Programmer
from tests.conftest import NOW, crash_in_a_solves_first_write, make_programmer, random_solves
from tests.support.commands import CommandLog

TODAY = leaderboard.epoch_day(NOW, "UTC")  # 18280, 2020-01-19


# --- brute force -----------------------------------------------------------------------------


def brute_current_streak(days: set[int], today: int) -> int:
    """Straight from the definition: consecutive solve days ending at D, else at D-1, else 0."""
    for end in (today, today - 1):
        if end in days:
            length = 0
            while end - length in days:
                length += 1
            return length
    return 0


def brute_longest_streak(days: set[int]) -> int:
    best = run = 0
    previous = None
    for day in sorted(days):
        run = run + 1 if previous == day - 1 else 1
        best, previous = max(best, run), day
    return best


def brute_year(programmer: Programmer, time_zone: str, today: int) -> dict:
    """What the activity API should answer, from the log alone."""
    log = list(mongo.solves().find({"programmer_id": programmer.pk}))
    days: dict[int, int] = {}
    for solve in log:
        day = solve["solved_at"].astimezone(ZoneInfo(time_zone)).date()
        key = (day - dt.date(1970, 1, 1)).days
        days[key] = days.get(key, 0) + 1
    in_year = {d: n for d, n in days.items() if today - 364 <= d <= today}
    return {
        "handle": programmer.handle,
        "from": leaderboard.day_to_date(today - 364).isoformat(),
        "to": leaderboard.day_to_date(today).isoformat(),
        "days": {leaderboard.day_to_date(d).isoformat(): n for d, n in sorted(in_year.items())},
        "solved": sum(in_year.values()),
        "active_days": len(in_year),
        "current_streak": brute_current_streak(set(days), today),
        "longest_streak": brute_longest_streak(set(days)),
    }


def brute_problem(problem: Problem) -> tuple[int, list[str], list[str]]:
    """(solvers on the boards, first 10 handles, latest 10 handles) from the log and the
    programmers' flags as they are now."""
    visible = {p.pk: p.handle for p in Programmer.objects.filter(hidden=False, banned=False)}
    log = [
        s for s in mongo.solves().find({"problem": problem.slug}) if s["programmer_id"] in visible
    ]
    first = sorted(log, key=lambda s: (s["solved_at"], s["programmer_id"]))
    latest = sorted(log, key=lambda s: (-s["solved_at"].timestamp(), s["programmer_id"]))
    return (
        len(log),
        [visible[s["programmer_id"]] for s in first[:10]],
        [visible[s["programmer_id"]] for s in latest[:10]],
    )


def shown_problem(problem: Problem) -> tuple[int, list[str], list[str]]:
    found = selectors.problem_solvers(problem=problem)
    return found.count, [s.handle for s in found.first], [s.handle for s in found.recent]


# --- streaks (pure) --------------------------------------------------------------------------


def test_streaks_equal_a_brute_force_count_on_random_solve_days():
    rng = random.Random(23)
    for _ in range(400):
        days = {rng.randrange(100) for _ in range(rng.randrange(40))}
        today = rng.randrange(-2, 103)
        assert streaks.current_streak(days, today) == brute_current_streak(days, today)
        assert streaks.longest_streak(days) == brute_longest_streak(days)


def test_a_streak_ending_yesterday_still_shows_today_and_is_zero_the_day_after():
    days = {10, 11, 12}
    assert streaks.current_streak(days, 12) == 3
    assert streaks.current_streak(days, 13) == 3  # alive until the end of the next day
    assert streaks.current_streak(days, 14) == 0
    assert streaks.current_streak(days | {14}, 14) == 1


def test_a_late_solve_joins_two_streaks():
    days = {1, 2, 3, 5, 6}
    assert streaks.longest_streak(days) == 3 and streaks.current_streak(days, 6) == 2
    days.add(4)  # reported late, on its own day
    assert streaks.longest_streak(days) == 6 and streaks.current_streak(days, 6) == 6


# --- random histories ------------------------------------------------------------------------


def _visibility_step(rng: random.Random, programmer: Programmer) -> None:
    flag = rng.choice(["hidden", "banned"])
    services.programmer_set_visibility(
        programmer=programmer, **{flag: not getattr(programmer, flag)}
    )


def _random_history(rng: random.Random, programmers, problems, start: dt.datetime, client):
    """Solves over 24 days in random order of reporting (a third reported late, up to four
    days after their time), with hides, bans and returns in between. After each visibility
    change the problems' counts are checked against the log."""
    events = []
    for programmer in programmers:
        events += random_solves(rng, programmer, problems, start=start, days=24, late_hours=96)
        for _ in range(rng.randrange(3)):
            moment = start + dt.timedelta(seconds=rng.randrange(26 * 86400))
            events.append((moment, "visibility", programmer, None, None))
    events.sort(key=lambda e: (e[0], e[1]))
    for reported_at, kind, programmer, problem, solved_at in events:
        with time_machine.travel(reported_at, tick=False):
            programmer.refresh_from_db()
            if kind == "solve":
                services.solve_record(programmer=programmer, problem=problem, solved_at=solved_at)
            else:
                _visibility_step(rng, programmer)
                for each in problems:
                    assert shown_problem(each) == brute_problem(each)
    return events[-1][0]


@pytest.mark.parametrize("time_zone", ["UTC", "Asia/Dhaka", "America/Los_Angeles"])
def test_years_streaks_and_problem_counts_equal_a_brute_force_over_the_log(
    mongodb, boards, settings, time_zone, client, staff
):
    settings.LEADERBOARD_TIME_ZONE = time_zone
    rng = random.Random(time_zone)
    problems = [Problem.objects.create(slug=f"q{i}", title=f"Q {i}") for i in range(9)]
    programmers = [make_programmer(f"coder{i}") for i in range(5)]
    start = dt.datetime(2020, 3, 1, 5, 30, tzinfo=dt.UTC)
    last = _random_history(rng, programmers, problems, start, client)
    # Staff see the activity of hidden programmers too; a banned one's is nobody's to see.
    client.force_login(staff)
    # Today at the end of the history, the next days (streaks die a day late) and a year on.
    for after in (0, 1, 2, 3, 340, 365, 366):
        moment = last + dt.timedelta(days=after)
        with time_machine.travel(moment, tick=False):
            today = leaderboard.epoch_day(moment, time_zone)
            for programmer in programmers:
                programmer.refresh_from_db()
                answer = client.get(f"/api/v1/programmers/{programmer.handle}/activity")
                if programmer.banned:
                    assert answer.status_code == 404
                    continue
                assert answer.status_code == 200
                assert answer.json() == brute_year(programmer, time_zone, today)
    for problem in problems:
        assert shown_problem(problem) == brute_problem(problem)
    listed = {e["slug"]: e["solvers"] for e in client.get("/api/v1/problems").json()["entries"]}
    assert listed == {p.slug: brute_problem(p)[0] for p in problems}


@pytest.mark.parametrize(
    "rebuild",
    [services.boards_rebuild_all, lambda: call_command("rebuild_boards", stdout=StringIO())],
    ids=["after an import", "by rebuild_boards"],
)
def test_a_rebuild_from_the_log_gives_the_same_counts_and_lists(
    mongodb, now, boards, problems, rebuild
):
    rng = random.Random(7)
    programmers = [make_programmer(f"coder{i}") for i in range(8)]
    for programmer in programmers:
        for problem in rng.sample(problems[:4], rng.randrange(5)):
            moment = NOW - dt.timedelta(seconds=rng.randrange(5 * 86400))
            services.solve_record(programmer=programmer, problem=problem, solved_at=moment)
    services.programmer_set_visibility(programmer=programmers[0], hidden=True)
    before = {p.slug: shown_problem(p) for p in problems}
    # Lost counts, and every solve marked as counted, the hidden programmer's too.
    mongo.problem_stats().delete_many({})
    mongo.solves().update_many({}, {"$set": {"problem_counted": True}})
    rebuild()
    assert {p.slug: shown_problem(p) for p in problems} == before
    assert before == {p.slug: brute_problem(p) for p in problems}
    services.programmer_set_visibility(programmer=programmers[0], hidden=False)
    assert {p.slug: shown_problem(p) for p in problems} == {
        p.slug: brute_problem(p) for p in problems
    }


# --- exactly once ----------------------------------------------------------------------------


def test_a_repeated_or_retried_solve_counts_once_in_its_problem(
    mongodb, now, boards, problems, alice
):
    p1 = problems[0]
    assert services.solve_record(programmer=alice, problem=p1, solved_at=NOW, request="r1")
    assert services.solve_record(programmer=alice, problem=p1, solved_at=NOW, request="r1")
    assert not services.solve_record(programmer=alice, problem=p1, solved_at=NOW)
    assert shown_problem(p1) == (1, ["Alice"], ["Alice"])
    logged = mongo.solves().find_one({"problem": p1.slug})
    assert logged["problem_counted"] is True and "problem_move" not in logged


def test_a_crash_between_counting_and_marking_counts_once_after_a_retry_or_the_repair(
    mongodb, now, boards, problems, alice, bob, monkeypatch
):
    p1 = problems[0]
    # Step 2 (the count, the day index, the chunk) done, step 3 (the mark) never happens.
    crash_in_a_solves_first_write(monkeypatch, -1, ConnectionError("the server went away"))
    with pytest.raises(ConnectionError):
        services.solve_record(programmer=alice, problem=p1, solved_at=NOW, request="a")
    with pytest.raises(ConnectionError):
        services.solve_record(programmer=bob, problem=p1, solved_at=NOW, request="b")
    monkeypatch.undo()
    assert shown_problem(p1)[0] == 2  # counted once each, not marked yet
    # Alice's judge retries; Bob's solve is left to the repair task.
    assert services.solve_record(programmer=alice, problem=p1, solved_at=NOW, request="a")
    stale = mongo.solves().find_one({"programmer_id": bob.pk})
    solvers.move_finish(stale)  # a second report holding what it read before: nothing more
    now.shift(dt.timedelta(minutes=3))
    services.solves_repair()
    assert shown_problem(p1) == (2, ["Alice", "bob"], ["Alice", "bob"])
    assert mongo.solves().count_documents({"problem_move": {"$exists": True}}) == 0
    assert mongo.solves().count_documents({"problem_counted": True}) == 2


def test_a_crash_before_counting_is_finished_by_the_repair_task(
    mongodb, now, boards, problems, alice, monkeypatch
):
    crash_in_a_solves_first_write(monkeypatch, -4, OSError())  # logged and counted on the boards
    with pytest.raises(OSError):
        services.solve_record(programmer=alice, problem=problems[0], solved_at=NOW)
    monkeypatch.undo()
    assert shown_problem(problems[0])[0] == 0
    now.shift(dt.timedelta(minutes=3))  # the repair task finishes what is 2 minutes old
    services.solves_repair()
    services.solves_repair()
    assert shown_problem(problems[0]) == (1, ["Alice"], ["Alice"])


def test_hiding_banning_and_restoring_move_a_programmer_out_of_and_back_into_the_counts(
    mongodb, now, boards, problems, alice, bob, charlie
):
    p1, p2 = problems[:2]
    for minutes, (programmer, problem) in enumerate(
        [(alice, p1), (bob, p1), (charlie, p1), (alice, p2)]
    ):
        services.solve_record(
            programmer=programmer,
            problem=problem,
            solved_at=NOW - dt.timedelta(minutes=60 - minutes),
        )
    assert shown_problem(p1) == (3, ["Alice", "bob", "charlie"], ["charlie", "bob", "Alice"])
    services.programmer_set_visibility(programmer=alice, hidden=True)
    assert shown_problem(p1) == (2, ["bob", "charlie"], ["charlie", "bob"])
    assert shown_problem(p2) == (0, [], [])
    services.programmer_set_visibility(programmer=bob, banned=True)
    services.programmer_set_visibility(programmer=alice, hidden=False)
    assert shown_problem(p1) == (2, ["Alice", "charlie"], ["charlie", "Alice"])
    assert shown_problem(p2) == (1, ["Alice"], ["Alice"])
    # Solves while banned are logged but not counted, until they return.
    services.solve_record(programmer=bob, problem=p2, solved_at=NOW)
    assert shown_problem(p2)[0] == 1
    services.programmer_set_visibility(programmer=bob, banned=False)
    assert shown_problem(p2) == (2, ["Alice", "bob"], ["bob", "Alice"])
    services.programmer_refresh_boards(programmer=bob)  # again: nothing moves twice
    assert shown_problem(p1)[0] == 3 and shown_problem(p2)[0] == 2


# --- pages -----------------------------------------------------------------------------------


@pytest.fixture
def solved(mongodb, now, boards, problems, alice, bob, charlie):
    """p2 solved by three, p1 by two, p3 by one; Alice solved on the last three days."""
    for programmer, problem, hours_ago in [
        (alice, problems[1], 49),
        (alice, problems[0], 25),
        (alice, problems[2], 1),
        (bob, problems[1], 3),
        (bob, problems[0], 2),
        (charlie, problems[1], 0.5),
    ]:
        services.solve_record(
            programmer=programmer, problem=problem, solved_at=NOW - dt.timedelta(hours=hours_ago)
        )


def problem_titles(response) -> list[tuple[str, int]]:
    rows = re.findall(
        r'<td><a href="/problems/[^"]+/">([^<]+)</a></td>\s*<td class="score">\d+</td>\s*'
        r'<td class="score">(\d+)</td>',
        response.text,
    )
    return [(title, int(count)) for title, count in rows]


def test_the_problems_page_shows_each_problems_solvers_and_sorts_by_them(client, solved):
    by_title = problem_titles(client.get("/problems/"))
    assert by_title[:3] == [("Problem 1", 2), ("Problem 10", 0), ("Problem 2", 3)]
    page = client.get("/problems/?sort=solvers")
    assert problem_titles(page)[:4] == [
        ("Problem 2", 3),
        ("Problem 1", 2),
        ("Problem 3", 1),
        ("Problem 10", 0),
    ]
    assert 'aria-sort="descending"' in page.text and 'href="?sort=title"' in page.text
    assert problem_titles(client.get("/problems/?sort=%00nonsense")) == by_title


def test_a_problems_page_shows_its_count_first_and_latest_solvers(client, solved, bob):
    page = client.get("/problems/p2/")
    assert "Solved by 3 programmers" in page.text
    first = page.text.index("First solvers")
    latest = page.text.index("Latest solvers")
    handles = re.findall(
        r'<a href="/u/([^/]+)/">', page.text[first : page.text.index("Every solver")]
    )
    assert handles == ["Alice", "bob", "charlie", "charlie", "bob", "Alice"]
    assert "<time" in page.text[latest:]
    services.programmer_set_visibility(programmer=bob, banned=True)
    page = client.get("/problems/p2/")
    assert "Solved by 2 programmers" in page.text and "/u/bob/" not in page.text
    assert "Nobody has solved it yet" in client.get("/problems/p9/").text


def test_the_profile_shows_the_year_its_figures_a_heatmap_and_a_table(client, solved, alice):
    page = client.get("/u/Alice/").text
    figures = dict(re.findall(r"<dt>([^<]+)</dt><dd>(\d+)", page))
    assert figures == {
        "Problems solved": "3",
        "Active days": "3",
        "Current streak": "3",
        "Longest streak": "3",
    }
    assert page.count("<rect") >= 365 + 5  # every day of the year, and the legend
    assert "<title>2020-01-19: 1 solve</title>" in page
    assert "<title>2020-01-16: 0 solves</title>" in page
    assert "<title>2019-01-20: 0 solves</title>" in page and "2019-01-19:" not in page
    assert ">Jan</text>" in page and ">Jul</text>" in page
    assert "Solves a day" in page  # the legend
    assert re.search(r"<td>Sun 19 Jan 2020</td><td class=\"score\">1</td>", page)
    assert 'style="' not in page  # the site's CSP: presentation attributes only
    nobody = make_programmer("Dora")
    empty = client.get(f"/u/{nobody.handle}/").text
    assert "No problems solved in the last year" in empty and '<svg class="heatmap"' not in empty


# --- API -------------------------------------------------------------------------------------


def test_the_activity_api_answers_the_year_and_the_streaks(client, solved, alice):
    answer = client.get("/api/v1/programmers/alice/activity")
    assert answer.status_code == 200
    assert answer.json() == {
        "handle": "Alice",
        "from": "2019-01-20",
        "to": "2020-01-19",
        "days": {"2020-01-17": 1, "2020-01-18": 1, "2020-01-19": 1},
        "solved": 3,
        "active_days": 3,
        "current_streak": 3,
        "longest_streak": 3,
    }
    missing = client.get("/api/v1/programmers/nobody/activity")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_programmer"
    bad = client.get("/api/v1/programmers/%20x/activity")
    assert bad.status_code == 404 and set(bad.json()["error"]) == {"code", "message"}


def test_the_problems_api_pages_the_problems_with_their_solvers(client, solved):
    answer = client.get("/api/v1/problems?page=1&page_size=3")
    assert answer.status_code == 200
    assert answer.json() == {
        "total": 10,
        "page": 1,
        "page_size": 3,
        "pages": 4,
        "entries": [
            {"slug": "p1", "title": "Problem 1", "points": 10, "solvers": 2},
            {"slug": "p10", "title": "Problem 10", "points": 100, "solvers": 0},
            {"slug": "p2", "title": "Problem 2", "points": 20, "solvers": 3},
        ],
    }
    assert client.get("/api/v1/problems?page=9").json()["entries"] == []
    Problem.objects.filter(slug="p1").update(published=False)
    assert client.get("/api/v1/problems").json()["total"] == 9
    for query in ("page=0", "page_size=0", "page_size=101", "page=x"):
        refused = client.get(f"/api/v1/problems?{query}")
        assert refused.status_code == 400, query
        assert set(refused.json()["error"]) == {"code", "message"}


def test_the_api_document_describes_both_endpoints(client, db):
    document = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/programmers/{handle}/activity" in document["paths"]
    assert "/api/v1/problems" in document["paths"]
    activity = document["components"]["schemas"]["ProgrammerActivity"]
    assert "from" in activity["properties"]
    assert "alive until the end" in " ".join(activity["description"].split())


# --- cost ------------------------------------------------------------------------------------


def replies(log: CommandLog) -> list[tuple[str, int]]:
    """(name, reply bytes) of every command in the log that succeeded."""
    return [(c.name, c.received) for c in log.commands if c.received is not None]


def _crowd(size: int, problems: list[Problem]) -> None:
    """`size` programmers who each solved the first three problems over the last days."""
    crowd = Programmer.objects.bulk_create([Programmer(handle=f"crowd{i:04}") for i in range(size)])
    rng = random.Random(size)
    services.solves_import(
        solves=[
            (programmer, problem, NOW - dt.timedelta(seconds=rng.randrange(20 * 86400)))
            for programmer in crowd
            for problem in problems[:3]
        ]
    )


PATHS = [
    "/problems/",
    "/problems/?sort=solvers",
    "/problems/p1/",
    "/u/Alice/",
    "/api/v1/problems",
    "/api/v1/programmers/Alice/activity",
]


def _costs(size: int, embedded_server, problems: list[Problem], alice: Programmer) -> dict:
    """{what: [(MongoDB command, reply bytes), ..., ("sql", queries)]} of each page and API
    read, and of a solve then a hide, with `size` programmers who solved the same problems."""
    mongo.get_db()["problem_stats"].delete_many({})
    mongo.solves().delete_many({})
    Programmer.objects.exclude(pk=alice.pk).delete()
    _crowd(size, problems)
    services.solve_record(programmer=alice, problem=problems[0], solved_at=NOW)
    log = CommandLog(on=False)
    previous = mongo.get_client()
    client = MongoClient(embedded_server.uri, tz_aware=True, event_listeners=[log])
    mongo.set_client(client)
    costs = {}
    try:
        web = Client()
        for path in PATHS:
            web.get(path)  # warm the caches (the boards, the versions)
            log.clear()
            with log.recording(), CaptureQueriesContext(connection) as sql:
                assert web.get(path).status_code == 200
            costs[path] = [*replies(log), ("sql", len(sql.captured_queries))]
        log.clear()
        with log.recording():
            bob = Programmer.objects.create(handle="newcomer")
            services.solve_record(programmer=bob, problem=problems[0], solved_at=NOW)
            services.programmer_set_visibility(programmer=bob, hidden=True)
        costs["solve and hide"] = replies(log)
    finally:
        mongo.set_client(previous)
        client.close()
    return costs


def test_what_the_pages_and_the_counters_cost_does_not_grow_with_the_programmers(
    mongodb, embedded_server, now, boards, problems, alice, settings
):
    small = _costs(30, embedded_server, problems, alice)
    large = _costs(300, embedded_server, problems, alice)
    for what in small:
        # The same commands and SQL queries, in the same order, and about the same bytes.
        commands = [(name, size) if name == "sql" else name for name, size in small[what]]
        assert commands == [
            (name, size) if name == "sql" else name for name, size in large[what]
        ], what
        small_bytes = sum(size for name, size in small[what] if name != "sql")
        large_bytes = sum(size for name, size in large[what] if name != "sql")
        assert large_bytes <= small_bytes + 2048, (what, small_bytes, large_bytes)
    # The solver counts themselves stayed right through all that.
    assert shown_problem(problems[0])[0] == 301


def test_the_problems_pages_sql_queries_do_not_grow_with_the_programmers(
    mongodb, now, boards, problems, alice, django_assert_max_num_queries
):
    _crowd(40, problems)
    with django_assert_max_num_queries(12):
        Client().get("/problems/p1/")
    with django_assert_max_num_queries(12):
        Client().get("/problems/")

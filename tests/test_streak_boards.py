"""Streak boards (issue 23, part 1): "Current streak" ranks each day by the current streak of
consecutive solve days, forward-dated like the sums, and "Longest streak" ranks by the longest
ever; ties by who reached the length first, then handle.

Random histories (gaps, late solves, hides, several time zones) go through the solve service
with the clock pinned, and every day's board, pages and ranks, agrees with a brute force over
the solves log by the definitions of `leaderboard.streaks`; a rebuild leaves exactly what the
solves left. Alice (BD, BUET) and Bob (IN) solve problems."""

from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict
from io import StringIO
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client

from activity import selectors as activity_selectors
from loadtest.verdict.boards import expected_scores
from loadtest.verdict.truth import Truth
from solutions import clock, leaderboard, mongo, selectors, services
from solutions.leaderboard import entries, streaks
from solutions.models import Board, Problem, Programmer
from tests.conftest import NOW
from tests.support.pages import ranks

TODAY = leaderboard.epoch_day(NOW, "UTC")


def at(day: int, hour: int = 12, minute: int = 0, time_zone: str = "UTC") -> dt.datetime:
    """A moment of an epoch day in a time zone."""
    moment = dt.datetime.combine(leaderboard.day_to_date(day), dt.time(hour, minute))
    return moment.replace(tzinfo=ZoneInfo(time_zone))


def solve(programmer: Programmer, problem: Problem, solved_at: dt.datetime, reported_at=None):
    """A solve reported at `reported_at` (when it happened, unless late), the clock pinned."""
    with time_machine.travel(reported_at or solved_at, tick=False):
        return services.solve_record(programmer=programmer, problem=problem, solved_at=solved_at)


def listed(board: Board, day: int, scope: str = "", page_size: int = 3) -> list[tuple]:
    """(rank, handle, score) of a board day, read page after page."""
    rows, number = [], 1
    while page := selectors.board_page(
        board=board, day=day, page=number, page_size=page_size, scope=scope
    ).rows:
        rows += [(row.rank, row.handle, row.score) for row in page]
        number += 1
    return rows


# --- the brute force, from the solves log ----------------------------------------------------


def first_solves(time_zone: str, scope: str = "") -> dict[Programmer, dict[int, dt.datetime]]:
    """{programmer on the boards: {solve day: its first solve time}}, from the solves log."""
    programmers = {
        p.pk: p
        for p in Programmer.objects.all()
        if p.on_boards and (not scope or scope in p.group_scopes())
    }
    first: dict[Programmer, dict[int, dt.datetime]] = defaultdict(dict)
    for solve_ in mongo.solves().find():
        programmer = programmers.get(solve_["programmer_id"])
        if programmer is not None:
            day = leaderboard.epoch_day(solve_["solved_at"], time_zone)
            days = first[programmer]
            days[day] = min(days.get(day, solve_["solved_at"]), solve_["solved_at"])
    return first


def reached(first: dict[int, dt.datetime], end: int, length: int) -> int:
    """When a run of `length` solve days ending at `end` had them all: the latest of their
    first solves (the seconds of the sort key)."""
    moment = max(first[day] for day in range(end - length + 1, end + 1))
    return int((moment - leaderboard.KEY_EPOCH).total_seconds())


def brute_board(board: Board, day: int, time_zone: str, scope: str = "") -> list[tuple]:
    """(rank, handle, score) of a streak board day, straight from the definitions: the longer
    streak first, then whoever reached it first, then by handle; equal streaks share a rank."""
    places = []
    for programmer, first in first_solves(time_zone, scope).items():
        if board.spec.is_all_time:
            score = streaks.longest_streak(first)
            ends = [end for end in first if streaks.streak_ending(first, end) == score]
        else:
            score = streaks.current_streak(first, day)
            ends = [day if day in first else day - 1]
        if score:
            when = min(reached(first, end, score) for end in ends)
            places.append((-score, when, programmer.handle.lower(), programmer.pk, programmer))
    places.sort()
    scores = [-place[0] for place in places]
    return [
        (1 + scores.index(score), place[-1].handle, score)
        for score, place in zip(scores, places, strict=True)
    ]


# --- the maths against the definitions ---------------------------------------------------------


def test_the_streak_of_every_day_and_the_longest_agree_with_the_definitions():
    rng = random.Random(23)
    for _ in range(300):
        start = rng.randrange(18_000, 18_300)
        solving = rng.random()
        first = {
            day: at(day, rng.randrange(24), rng.randrange(60))
            for day in range(start, start + rng.randrange(1, 40))
            if rng.random() < solving
        }
        scores = leaderboard.streak_scores(first)
        for day in range(start - 2, start + 42):
            length = streaks.current_streak(first, day)
            end = day if day in first else day - 1
            expected = (length, first[end]) if length else None
            assert scores.get(day) == expected, (sorted(first), day)
            if expected:
                assert scores[day][1] == max(first[d] for d in range(end - length + 1, end + 1))
        longest = streaks.longest_streak(first)
        if not first:
            assert leaderboard.longest_streak_score(first) is None
            continue
        ends = [end for end in first if streaks.streak_ending(first, end) == longest]
        assert leaderboard.longest_streak_score(first) == (longest, min(first[e] for e in ends))
        assert all(
            leaderboard.streak_starts(first)[day] == day - streaks.streak_ending(first, day) + 1
            for day in first
        )


# --- the boards on random histories -------------------------------------------------------------

FIRST_DAY = TODAY - 17  # some 18 days of solving up to today (sort keys count from 2020)
MAX_LATE_DAYS = 4  # so that streaks run far longer than the days an entry keeps


def random_history(
    rng: random.Random, people: list[Programmer], problems: list[Problem], time_zone: str
) -> list[tuple]:
    """Events (reported at, kind, ...) to sort: each programmer solves on most days or few, one
    to three problems a solve day at any hour of their day (in the leaderboard's time zone), a
    quarter of the solve days reported late (up to MAX_LATE_DAYS), some solves reported twice;
    one programmer is hidden for a week, one banned from the start."""
    events = []
    for programmer in people:
        solving = rng.choice([0.3, 0.7, 0.9, 1.0])
        unsolved = list(problems)
        rng.shuffle(unsolved)
        for day in range(FIRST_DAY, TODAY + 1):
            if rng.random() > solving:
                continue
            for _ in range(rng.choice([1, 1, 2, 3])):
                solved_at = at(day, rng.randrange(24), rng.randrange(60), time_zone)
                late = rng.randint(1, MAX_LATE_DAYS) if rng.random() < 0.25 else 0
                reported = at(day + late, rng.randrange(24), 0, time_zone) if late else solved_at
                reported = max(solved_at, min(reported, at(TODAY, 23, 50, time_zone)))
                problem = unsolved.pop() if rng.random() < 0.9 else rng.choice(problems)
                events.append((reported, "solve", programmer, problem, solved_at))
    hidden, banned = people[1], people[2]
    events.append((at(TODAY - 12, 8, 0, time_zone), "visibility", hidden, {"hidden": True}))
    events.append((at(TODAY - 5, 8, 0, time_zone), "visibility", hidden, {"hidden": False}))
    events.append((at(FIRST_DAY - 1, 8, 0, time_zone), "visibility", banned, {"banned": True}))
    return sorted(events, key=lambda event: (event[0], event[1]))


def streak_boards_only(streak_boards: dict[str, Board]) -> tuple[Board, Board]:
    """The two streak boards, alone on the site (so each solve updates two entries, not five)."""
    Board.objects.exclude(slug__in=list(streak_boards)).delete()
    return streak_boards["streak"], streak_boards["longest-streak"]


def check_every_day(current: Board, longest: Board, days: range, time_zone: str) -> None:
    """Every day's page (everybody and a country) and every programmer's rank on both boards
    agree with the brute force."""
    programmers = list(Programmer.objects.all())
    for board, board_days in ((current, days), (longest, [clock.today()])):
        for day in board_days:
            for scope in ("country:BD", ""):
                expected = brute_board(board, day, time_zone, scope)
                assert listed(board, day, scope) == expected, (board.slug, day, scope)
            expected = {handle: (rank, score) for rank, handle, score in expected}  # everybody
            for programmer in programmers:
                standing = selectors.programmer_standing(
                    board=board, programmer=programmer, day=day
                )
                found = (standing.rank, standing.score) if standing.rank else None
                assert found == expected.get(programmer.handle), (board.slug, day, programmer)


@pytest.mark.parametrize("time_zone", ["UTC", "Asia/Kathmandu", "America/St_Johns"])
def test_every_day_of_the_streak_boards_agrees_with_brute_force_on_random_histories(
    streak_boards, settings, time_zone
):
    settings.LEADERBOARD_TIME_ZONE = time_zone
    settings.LEADERBOARD_MAX_LATE_DAYS = MAX_LATE_DAYS
    current, longest = streak_boards_only(streak_boards)
    rng = random.Random(time_zone)
    countries = ["BD", "BD", "IN", ""]
    people = [
        services.programmer_create(user=None, handle=f"Coder{n}", country=countries[n % 4])
        for n in range(7)
    ]
    problems = Problem.objects.bulk_create(
        Problem(slug=f"q{n}", title=f"Q{n}", answer="1") for n in range(70)
    )
    counted = 0
    checked_on = {TODAY - 13, TODAY - 6}
    for reported, kind, programmer, *what in random_history(rng, people, problems, time_zone):
        with time_machine.travel(reported, tick=False):
            today = clock.today()
            if checked_on and today > min(checked_on):  # at the end of that day, as it stood
                check_every_day(current, longest, range(today - 3, today + 1), time_zone)
                checked_on.remove(min(checked_on))
            if kind == "visibility":
                services.programmer_set_visibility(programmer=programmer, **what[0])
            else:
                problem, solved_at = what
                counted += services.solve_record(
                    programmer=programmer, problem=problem, solved_at=solved_at
                )
    assert counted > 100
    with time_machine.travel(at(TODAY, 23, 55, time_zone), tick=False):
        today = clock.today()
        check_every_day(current, longest, range(FIRST_DAY - 1, today + 2), time_zone)
        # Streaks far longer than the days an entry keeps, and the entries stay that small.
        assert max(score for _, _, score in listed(longest, today)) > MAX_LATE_DAYS + 3
        for entry in entries.entries(current.slug).find():
            assert len(entry.get("first", {})) <= MAX_LATE_DAYS + 3
        # A solve of today by each of them trims what their entry keeps (once a day, on its
        # first change): then a rebuild from the log finds nothing to change.
        more = iter(Problem.objects.bulk_create(Problem(slug=f"z{n}", title="Z") for n in range(7)))
        for programmer in people:
            services.solve_record(programmer=programmer, problem=next(more), solved_at=at(TODAY))
        before = {day: listed(current, day) for day in range(FIRST_DAY - 1, today + 2)}
        before["longest"] = listed(longest, today)
        for board in (current, longest):
            assert services.board_rebuild(board=board, dry_run=True).changed == 0, board.slug
            services.board_rebuild(board=board)
        after = {day: listed(current, day) for day in range(FIRST_DAY - 1, today + 2)}
        assert before == after | {"longest": listed(longest, today)}
        check_every_day(current, longest, range(today - 1, today + 2), time_zone)


# --- forward-dated: no job at midnight -----------------------------------------------------------


def test_a_streak_shows_the_next_day_with_no_solve_and_is_off_the_day_after(
    streak_boards, problems, alice, bob
):
    current, longest = streak_boards["streak"], streak_boards["longest-streak"]
    for n, day in enumerate([TODAY - 2, TODAY - 1, TODAY]):
        solve(alice, problems[n], at(day, 9))
    solve(bob, problems[0], at(TODAY - 1, 10))
    with time_machine.travel(at(TODAY, 13), tick=False):
        assert listed(current, TODAY) == [(1, "Alice", 3), (2, "bob", 1)]
        forecast = selectors.programmer_around(
            board=current, programmer=alice, around=0, forecast_days=current.spec.span
        ).forecast
        assert [score for _, score in forecast] == [3, 0]  # known today
    # Nobody solves and nothing runs before midnight: the new day's first read makes its board.
    with time_machine.travel(at(TODAY + 1, 0, 1), tick=False):
        assert listed(current, clock.today()) == [(1, "Alice", 3)]
        assert listed(longest, clock.today()) == [(1, "Alice", 3), (2, "bob", 1)]
    with time_machine.travel(at(TODAY + 2, 0, 1), tick=False):
        assert listed(current, clock.today()) == []
        assert listed(current, TODAY) == [(1, "Alice", 3), (2, "bob", 1)]  # the final board
        assert listed(longest, clock.today()) == [(1, "Alice", 3), (2, "bob", 1)]
        solve(alice, problems[5], at(TODAY + 2, 8))  # a new streak begins
        assert listed(current, clock.today()) == [(1, "Alice", 1)]
        assert listed(longest, clock.today()) == [(1, "Alice", 3), (2, "bob", 1)]


def tomorrow(board: Board, programmer) -> int:
    """A programmer's score tomorrow as their forecast says it (tomorrow has no board yet)."""
    around = selectors.programmer_around(board=board, programmer=programmer, forecast_days=1)
    return around.forecast[0][1]


def test_a_late_solve_joins_two_streaks_and_changes_the_past_days(streak_boards, problems, alice):
    current, longest = streak_boards["streak"], streak_boards["longest-streak"]
    for n, day in enumerate([TODAY - 5, TODAY - 4, TODAY - 2, TODAY - 1, TODAY]):
        solve(alice, problems[n], at(day, 9))
    with time_machine.travel(at(TODAY, 13), tick=False):
        assert [listed(current, day)[0][2] for day in range(TODAY - 5, TODAY + 1)] == [
            1, 2, 2, 1, 2, 3,
        ]  # fmt: skip
        assert tomorrow(current, alice) == 3
        assert listed(longest, TODAY) == [(1, "Alice", 3)]
    solve(alice, problems[5], at(TODAY - 3, 22), reported_at=at(TODAY, 14))  # late
    with time_machine.travel(at(TODAY, 15), tick=False):
        assert [listed(current, day)[0][2] for day in range(TODAY - 5, TODAY + 1)] == [
            1, 2, 3, 4, 5, 6,
        ]  # fmt: skip
        assert tomorrow(current, alice) == 6
        assert listed(longest, TODAY) == [(1, "Alice", 6)]
        for board in (current, longest):
            assert services.board_rebuild(board=board, dry_run=True).changed == 0


def test_equal_streaks_share_a_rank_and_who_reached_it_first_is_listed_first(
    streak_boards, problems, alice, bob, charlie
):
    current, longest = streak_boards["streak"], streak_boards["longest-streak"]
    for programmer, hour in ((charlie, 11), (bob, 10), (alice, 9)):
        solve(programmer, problems[0], at(TODAY - 1, hour))
    solve(alice, problems[1], at(TODAY, 12))
    solve(bob, problems[1], at(TODAY, 8))  # reached 2 before Alice
    solve(charlie, problems[1], at(TODAY - 1, 7))  # a second solve the same day: still 1
    with time_machine.travel(at(TODAY, 13), tick=False):
        assert listed(current, TODAY) == [(1, "bob", 2), (1, "Alice", 2), (3, "charlie", 1)]
        assert listed(longest, TODAY) == [(1, "bob", 2), (1, "Alice", 2), (3, "charlie", 1)]


def test_a_hidden_programmer_leaves_the_streak_boards_and_comes_back_with_the_streak(
    streak_boards, problems, alice, bob
):
    current, longest = streak_boards["streak"], streak_boards["longest-streak"]
    for n, day in enumerate([TODAY - 2, TODAY - 1]):
        solve(alice, problems[n], at(day, 9))
    solve(bob, problems[0], at(TODAY, 9))
    with time_machine.travel(at(TODAY, 10), tick=False):
        services.programmer_set_visibility(programmer=alice, hidden=True)
        solve(alice, problems[2], at(TODAY, 10))  # logged while hidden
        assert listed(current, TODAY) == listed(longest, TODAY) == [(1, "bob", 1)]
        services.programmer_set_visibility(programmer=alice, hidden=False)
        assert listed(current, TODAY) == [(1, "Alice", 3), (2, "bob", 1)]
        assert listed(longest, TODAY) == [(1, "Alice", 3), (2, "bob", 1)]


# --- the board definition ----------------------------------------------------------------------


def test_the_streak_boards_are_seeded_and_a_streak_board_is_daily_or_all_time(streak_boards):
    current, longest = streak_boards["streak"], streak_boards["longest-streak"]
    assert (current.title, longest.title) == ("Current streak", "Longest streak")
    assert current.spec == leaderboard.streak_window(all_time=False)
    assert longest.spec == leaderboard.streak_window(all_time=True)
    weekly = Board(slug="weekly-streak", title="W", window=leaderboard.WEEK, metric=Board.STREAK)
    with pytest.raises(ValidationError):
        weekly.full_clean()


# --- pages and the API ---------------------------------------------------------------------------


@pytest.fixture
def streaking(streak_boards, boards, problems, alice, bob, charlie):
    """Alice (BD) solved the last three days, Bob (IN) the last two, Charlie four days running
    a week ago. The clock is at today's noon."""
    for n, day in enumerate([TODAY - 2, TODAY - 1, TODAY]):
        solve(alice, problems[n], at(day, 9))
    for n, day in enumerate([TODAY - 1, TODAY]):
        solve(bob, problems[n], at(day, 8))
    for n, day in enumerate(range(TODAY - 10, TODAY - 6)):
        solve(charlie, problems[n], at(day, 7))
    with time_machine.travel(NOW, tick=False):
        yield streak_boards


def test_the_streak_board_pages_define_the_streak_and_list_each_day(streaking):
    page = Client().get("/leaderboard/streak/")
    assert ranks(page) == [(1, "Alice", 3), (2, "bob", 2)]
    assert "Current streak of solve days" in page.text
    assert "consecutive solve days ending that day" in page.text
    assert "stays alive until the end of the next day" in page.text
    past = Client().get("/leaderboard/streak/?date=2020-01-13")  # the day after Charlie's last
    assert ranks(past) == [(1, "charlie", 4)]
    assert ranks(Client().get("/leaderboard/streak/?country=IN")) == [(1, "bob", 2)]
    countries = Client().get("/leaderboard/streak/?view=countries")
    assert countries.status_code == 200 and "Bangladesh" in countries.text
    longest = Client().get("/leaderboard/longest-streak/")
    assert ranks(longest) == [(1, "charlie", 4), (2, "Alice", 3), (3, "bob", 2)]
    assert "largest number of consecutive solve days ever" in longest.text
    live = Client().get("/leaderboard/streak/live/")
    assert live.status_code == 200 and ranks(live) == [(1, "Alice", 3), (2, "bob", 2)]
    assert (2, "bob", 2) in ranks(Client().get("/leaderboard/streak/?q=bob"))
    profile = Client().get("/u/Alice/")
    assert profile.status_code == 200 and "Current streak" in profile.text


def test_streak_boards_head_their_scores_days(streaking, alice):
    """A streak is a number of days, and every table of a streak board says so."""
    for url in (
        "/leaderboard/streak/",
        "/leaderboard/longest-streak/",
        "/leaderboard/streak/live/",
    ):
        text = Client().get(url).text
        assert '<th class="score">Days</th>' in text and '<th class="score">Score</th>' not in text
    matches = Client().get("/leaderboard/streak/?q=b").text  # bob: one match, with neighbours
    assert '<th class="score">Days</th>' in matches
    several = Client().get("/leaderboard/longest-streak/?q=").text
    assert '<th class="score">Score</th>' not in several
    client = Client()
    client.force_login(alice.user)
    assert "with a streak of <strong>3</strong> days." in client.get("/leaderboard/streak/").text
    everyday = Client().get("/leaderboard/").text
    assert '<th class="score">Score</th>' in everyday and '<th class="score">Days' not in everyday


def test_the_api_serves_the_streak_boards_like_every_board(streaking, client):
    listed_boards = {
        board["slug"]: board for board in client.get("/api/v1/boards").json()["boards"]
    }
    assert listed_boards["streak"] == {
        "slug": "streak",
        "title": "Current streak",
        "window": "rolling",
        "window_days": None,
        "metric": "streak",
        "score_label": "Days",
        "ties": "shared",
    }
    assert listed_boards["last-7-days"]["score_label"] == "Score"
    assert listed_boards["longest-streak"]["window"] == "all_time"
    page = client.get("/api/v1/boards/streak?page_size=1").json()
    assert (page["total"], page["entries"]) == (2, [{"rank": 1, "handle": "Alice", "score": 3}])
    past = client.get("/api/v1/boards/streak?date=2020-01-12").json()
    assert [(e["handle"], e["score"]) for e in past["entries"]] == [("charlie", 4)]
    assert client.get("/api/v1/boards/streak?date=2020-01-14").json()["entries"] == []
    around = client.get("/api/v1/boards/streak/programmers/bob?around=2").json()
    assert (around["rank"], around["score"]) == (2, 2)
    assert [row["handle"] for row in around["above"]] == ["Alice"]
    assert around["forecast"] == [
        {"date": "2020-01-20", "score": 2},
        {"date": "2020-01-21", "score": 0},
    ]
    groups = client.get("/api/v1/boards/streak/groups?kind=country").json()
    assert [(row["group"], row["members"]) for row in groups["entries"]] == [("BD", 1), ("IN", 1)]
    longest = client.get("/api/v1/boards/longest-streak").json()
    assert [(e["rank"], e["handle"], e["score"]) for e in longest["entries"]] == [
        (1, "charlie", 4),
        (2, "Alice", 3),
        (3, "bob", 2),
    ]
    assert client.get("/api/v1/boards/longest-streak?date=2020-01-12").status_code == 400
    schema = client.get("/api/v1/openapi.json").json()["components"]["schemas"]["BoardOut"]
    assert "consecutive solve days" in schema["properties"]["metric"]["description"]


# --- the contest day's checker -------------------------------------------------------------------


def test_the_contest_day_checker_computes_streaks_from_its_own_log():
    truth = Truth(
        solve_day={("ann", "a"): 98, ("ann", "b"): 99, ("ann", "c"): 100, ("bob", "a"): 99},
        groups={"ann": ("BD", ""), "bob": ("IN", "")},
    )
    current = {"window": "rolling", "window_days": None, "metric": "streak"}
    longest = {"window": "all_time", "window_days": None, "metric": "streak"}
    assert expected_scores(truth, current, 100, ("everybody", "")) == {"ann": 3, "bob": 1}
    assert expected_scores(truth, current, 101, ("everybody", "")) == {"ann": 3}
    assert expected_scores(truth, current, 102, ("everybody", "")) == {}
    assert expected_scores(truth, longest, 102, ("country", "IN")) == {"bob": 1}


# --- the demo ------------------------------------------------------------------------------------


@time_machine.travel(NOW + dt.timedelta(days=60), tick=False)  # a month of solves all in 2020
def test_the_demo_fills_the_streak_boards_as_a_rebuild_would(streak_boards, boards):
    call_command("seed_demo", "--programmers", "8", stdout=StringIO())
    current, longest = streak_boards["streak"], streak_boards["longest-streak"]
    assert listed(current, clock.today(), page_size=25)
    streaks_now = [score for _, _, score in listed(longest, clock.today(), page_size=25)]
    assert len(streaks_now) == 8 and max(streaks_now) > 1
    for board in (current, longest):
        assert services.board_rebuild(board=board, dry_run=True).changed == 0, board.slug
    # Their past days' ranks are recorded like every board's, for the profile charts.
    leader = Programmer.objects.get(handle=selectors.board_page(board=longest).rows[0].handle)
    history = activity_selectors.rank_history(board=longest, programmer=leader)
    assert len([rank for _, rank in history[:-1] if rank is not None]) >= 5
    history = activity_selectors.rank_history(board=current, programmer=leader)
    yesterday = selectors.programmer_standing(
        board=current, programmer=leader, day=clock.today() - 1
    )
    assert history[-2][1] == yesterday.rank

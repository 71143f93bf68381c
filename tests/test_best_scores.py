"""Best-score boards (issue 38, section 1): each problem counts the programmer's best reported
score inside the window, and the board ranks by the sum of those bests; higher or lower is
better per board; a board may take one problem alone (the design notes' leaderboard of best
scores, `seeds/003_…`). Ties: whoever reached the total first.

Random histories of scored reports (random scores, late reports, retries of the same request,
rolling windows moving across days with the clock pinned) go through the services, and every
day's board agrees with a brute force over the `scores` log by `leaderboard.best_total`; a
rebuild from the log leaves exactly what the reports left. Alice and Bob report scores."""

from __future__ import annotations

import datetime as dt
import random
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.test import Client

from solutions import clock, leaderboard, mongo, selectors, services
from solutions.leaderboard import entries
from solutions.models import Board, Problem, Programmer, ServiceToken
from solutions.tokens import service_token_create
from tests.conftest import NOW

TODAY = leaderboard.epoch_day(NOW, "UTC")


def at(day: int, hour: int = 12, minute: int = 0, time_zone: str = "UTC") -> dt.datetime:
    """A moment of an epoch day in a time zone."""
    moment = dt.datetime.combine(leaderboard.day_to_date(day), dt.time(hour, minute))
    return moment.replace(tzinfo=ZoneInfo(time_zone))


def report(programmer, problem, score: int, solved_at, reported_at=None, request=None) -> bool:
    """A scored report made at `reported_at` (when it happened, unless late), the clock pinned."""
    with time_machine.travel(reported_at or solved_at, tick=False):
        return services.score_record(
            programmer=programmer,
            problem=problem,
            solved_at=solved_at,
            score=score,
            request=request,
        )


def listed(board: Board, day: int, page_size: int = 3) -> list[tuple]:
    """(rank, handle, score) of a board day, read page after page."""
    rows, number = [], 1
    while page := selectors.board_page(board=board, day=day, page=number, page_size=page_size).rows:
        rows += [(row.rank, row.handle, row.score) for row in page]
        number += 1
    return rows


def brute_board(board: Board, day: int, time_zone: str) -> list[tuple]:
    """(rank, handle, score) of a best-score board day straight from the `scores` log: the
    bigger total first, then whoever reached it first, then by handle; equal totals share a
    rank."""
    people = {p.pk: p for p in Programmer.objects.all() if p.on_boards}
    reports: dict[int, list[leaderboard.Report]] = {}
    for logged in mongo.scores().find():
        if logged["programmer_id"] in people and board.counts_problem(logged["problem"]):
            reports.setdefault(logged["programmer_id"], []).append(
                leaderboard.Report(
                    logged["problem"],
                    leaderboard.epoch_day(logged["solved_at"], time_zone),
                    board.value_of_score(logged["score"]),
                    logged["solved_at"],
                )
            )
    places = []
    for pid, mine in reports.items():
        total, reached = leaderboard.best_total(mine, board.spec, day) or (0, None)
        if total > 0:
            seconds = int((reached - leaderboard.KEY_EPOCH).total_seconds())
            places.append((-total, seconds, people[pid].handle.lower(), pid, people[pid].handle))
    places.sort()
    totals = [-place[0] for place in places]
    return [(1 + totals.index(t), place[-1], t) for t, place in zip(totals, places, strict=True)]


def best_board(slug: str, **fields) -> Board:
    board = Board.objects.create(slug=slug, title=slug, metric=Board.BEST, **fields)
    mongo.ensure_indexes([board.slug])
    return board


@pytest.fixture
def scored(mongodb) -> list[Problem]:
    """Three scored problems, on a site with best-score boards alone (each report updates
    them, not the boards of solves)."""
    Board.objects.all().delete()
    return [Problem.objects.create(slug=f"h{n}", title=f"H{n}", scored=True) for n in range(3)]


# --- the definition ---------------------------------------------------------------------------


def test_the_total_sums_each_problems_best_inside_the_window_reached_when_the_last_best_came():
    week = leaderboard.Window(leaderboard.ROLLING, 3, best=True)
    reports = [
        leaderboard.Report("a", 10, 50, at(10, 9)),
        leaderboard.Report("a", 11, 70, at(11, 9)),
        leaderboard.Report("a", 12, 70, at(12, 9)),  # the same best, later: not when reached
        leaderboard.Report("b", 12, 5, at(12, 10)),
    ]
    assert leaderboard.best_total(reports, week, 12) == (75, at(12, 10))
    assert leaderboard.best_total(reports, week, 13) == (75, at(12, 10))
    # Day 11's 70 falls out of the window on day 14: day 12's equal 70 stands in for it.
    assert leaderboard.best_total(reports, week, 14) == (75, at(12, 10))
    assert leaderboard.best_total(reports, week, 15) is None
    assert leaderboard.best_total(reports, week, 10) == (50, at(10, 9))


# --- the boards ---------------------------------------------------------------------------------


def test_a_better_score_replaces_a_worse_one_and_a_worse_one_changes_nothing(scored, alice, bob):
    board = best_board("best-all", window=leaderboard.ALL_TIME)
    h0, h1, _ = scored
    report(alice, h0, 40, at(TODAY, 9))
    report(alice, h1, 10, at(TODAY, 10))
    report(bob, h0, 45, at(TODAY, 11))
    with time_machine.travel(at(TODAY, 13), tick=False):
        assert listed(board, TODAY) == [(1, "Alice", 50), (2, "bob", 45)]
    report(bob, h0, 60, at(TODAY, 12))  # better
    report(alice, h0, 30, at(TODAY, 12, 30))  # worse: nothing changes
    with time_machine.travel(at(TODAY, 13), tick=False):
        assert listed(board, TODAY) == [(1, "bob", 60), (2, "Alice", 50)]
        assert mongo.scores().count_documents({}) == 5  # every report kept


def test_equal_totals_share_a_rank_and_who_reached_it_first_is_listed_first(scored, alice, bob):
    board = best_board("best-all", window=leaderboard.ALL_TIME)
    report(bob, scored[0], 30, at(TODAY, 9))
    report(alice, scored[0], 30, at(TODAY, 10))
    report(alice, scored[0], 30, at(TODAY, 8), reported_at=at(TODAY, 11))  # late, reached earlier
    with time_machine.travel(at(TODAY, 13), tick=False):
        assert listed(board, TODAY) == [(1, "Alice", 30), (1, "bob", 30)]


def test_lower_is_better_counts_the_limit_minus_the_best_and_one_problem_alone(scored, alice, bob):
    fastest = best_board(
        "fastest-h0", window=leaderboard.ALL_TIME, problem=scored[0], lower_is_better=True,
        score_limit=1000,
    )  # fmt: skip
    report(alice, scored[0], 300, at(TODAY, 9))
    report(alice, scored[0], 200, at(TODAY, 10))  # faster: better
    report(bob, scored[0], 250, at(TODAY, 9))
    report(bob, scored[1], 1, at(TODAY, 9))  # another problem: not on this board
    with time_machine.travel(at(TODAY, 13), tick=False):
        assert listed(fastest, TODAY) == [(1, "Alice", 800), (2, "bob", 750)]


def test_a_retry_of_the_same_request_counts_once(scored, alice):
    board = best_board("best-7", window=leaderboard.ROLLING, window_days=7)
    for _ in range(3):
        assert report(alice, scored[0], 40, at(TODAY, 9), request="judge:run-1")
    assert mongo.scores().count_documents({}) == 1
    with time_machine.travel(at(TODAY, 13), tick=False):
        assert listed(board, TODAY) == [(1, "Alice", 40)]


def test_a_best_score_board_takes_only_a_scored_problem_of_its_own_metric(scored, problems):
    board = Board(slug="b", title="B", metric=Board.BEST, problem=problems[0])
    with pytest.raises(ValidationError, match="not scored"):
        board.full_clean()
    board.problem = scored[0]
    board.full_clean()
    board.metric = Board.POINTS
    with pytest.raises(ValidationError, match="best-score"):
        board.full_clean()


def test_the_api_takes_a_score_and_the_board_lists_it(scored, alice):
    board = best_board("best-7", window=leaderboard.ROLLING, window_days=7)
    token = service_token_create(name="judge")[1]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    body = {"programmer": "Alice", "problem": "h0", "solved_at": at(TODAY, 9).isoformat()}
    with time_machine.travel(at(TODAY, 10), tick=False):
        for n, score in enumerate([70, 90, 80]):
            answer = client.post(
                "/api/v1/solves", {"id": f"r{n}", "score": score, **body}, "application/json"
            )
            assert answer.status_code == 201, answer.content
            assert answer.json()["counted"] is True
        again = client.post("/api/v1/solves", {"id": "r1", "score": 90, **body}, "application/json")
        assert again.status_code == 201
        bad = client.post("/api/v1/solves", {"id": "r9", "score": -1, **body}, "application/json")
        assert bad.status_code == 422 or bad.status_code == 400
        page = client.get(f"/api/v1/boards/{board.slug}").json()
    assert [(e["handle"], e["score"]) for e in page["entries"]] == [("Alice", 90)]
    assert mongo.scores().count_documents({}) == 3
    assert ServiceToken.objects.count() == 1


# --- random histories ---------------------------------------------------------------------------

FIRST_DAY = TODAY - 12
MAX_LATE_DAYS = 4


def random_reports(rng: random.Random, people, problems, time_zone: str) -> list[tuple]:
    """(reported at, programmer, problem, score, solved at, request) to sort: each programmer
    reports on some days, random scores of random problems at any hour, a quarter of them late
    (up to MAX_LATE_DAYS), some retried with the same request."""
    events = []
    for programmer in people:
        active = rng.choice([0.3, 0.6, 0.9])
        for day in range(FIRST_DAY, TODAY + 1):
            if rng.random() > active:
                continue
            for _ in range(rng.choice([1, 2, 3])):
                solved_at = at(day, rng.randrange(24), rng.randrange(60), time_zone)
                late = rng.randint(1, MAX_LATE_DAYS) if rng.random() < 0.25 else 0
                reported = at(day + late, rng.randrange(24), 0, time_zone) if late else solved_at
                reported = max(solved_at, min(reported, at(TODAY, 23, 50, time_zone)))
                score = rng.choice([rng.randrange(1, 100), rng.randrange(1, 10)])
                request = f"{programmer.pk}:{len(events)}"
                event = (reported, programmer, rng.choice(problems), score, solved_at, request)
                events.append(event)
                if rng.random() < 0.1:  # a retry of the same request, a little later
                    events.append((reported + dt.timedelta(minutes=1), *event[1:]))
    return sorted(events, key=lambda event: event[0])


def check_every_day(boards: list[Board], days: range, time_zone: str) -> None:
    for board in boards:
        for day in [clock.today()] if board.spec.is_all_time else days:
            assert listed(board, day) == brute_board(board, day, time_zone), (board.slug, day)


@pytest.mark.parametrize("time_zone", ["UTC", "Asia/Kathmandu"])
def test_every_day_of_the_best_score_boards_agrees_with_brute_force_on_random_histories(
    scored, settings, time_zone
):
    settings.LEADERBOARD_TIME_ZONE = time_zone
    settings.LEADERBOARD_MAX_LATE_DAYS = MAX_LATE_DAYS
    boards = [
        best_board("best-3", window=leaderboard.ROLLING, window_days=3),
        best_board(
            "fastest-3",
            window=leaderboard.ROLLING,
            window_days=3,
            lower_is_better=True,
            score_limit=100,
        ),  # fmt: skip
        best_board("best-week", window=leaderboard.WEEK),
        best_board("best-ever", window=leaderboard.ALL_TIME),
        best_board("best-h1", window=leaderboard.ALL_TIME, problem=scored[1]),
    ]
    rng = random.Random(time_zone)
    people = [
        services.programmer_create(user=None, handle=f"Coder{n}", country=["BD", "IN"][n % 2])
        for n in range(5)
    ]
    checked_on = {TODAY - 8, TODAY - 3}
    for reported, programmer, problem, score, solved_at, request in random_reports(
        rng, people, scored, time_zone
    ):
        with time_machine.travel(reported, tick=False):
            today = clock.today()
            if checked_on and today > min(checked_on):  # at the end of that day, as it stood
                check_every_day(boards, range(today - 3, today + 1), time_zone)
                checked_on.remove(min(checked_on))
        report(programmer, problem, score, solved_at, reported, request)
    with time_machine.travel(at(TODAY, 23, 55, time_zone), tick=False):
        today = clock.today()
        check_every_day(boards, range(FIRST_DAY - 1, today + 2), time_zone)
        assert sum(len(listed(board, today)) for board in boards) > 10
        # A report of today by each trims what their entry keeps (once a day, on its first
        # change): then a rebuild from the log finds nothing to change.
        for programmer in people:
            services.score_record(
                programmer=programmer,
                problem=scored[2],
                solved_at=at(TODAY, 23, 50, time_zone),
                score=1,
            )
        for board in boards:
            for entry in entries.entries(board.slug).find():
                assert len(entry["best"]) <= len(scored) * (3 + MAX_LATE_DAYS + 7 + 1)
        before = {board.slug: listed(board, today) for board in boards}
        for board in boards:
            assert services.board_rebuild(board=board, dry_run=True).changed == 0, board.slug
            services.board_rebuild(board=board)
        assert before == {board.slug: listed(board, today) for board in boards}
        check_every_day(boards, range(today - 2, today + 2), time_zone)


def test_a_hidden_programmer_leaves_the_best_score_boards_and_comes_back(scored, alice, bob):
    board = best_board("best-7", window=leaderboard.ROLLING, window_days=7)
    report(alice, scored[0], 40, at(TODAY, 9))
    report(bob, scored[0], 30, at(TODAY, 9))
    with time_machine.travel(at(TODAY, 13), tick=False):
        services.programmer_set_visibility(programmer=alice, hidden=True)
        assert listed(board, TODAY) == [(1, "bob", 30)]
        services.programmer_set_visibility(programmer=alice, hidden=False)
        assert listed(board, TODAY) == [(1, "Alice", 40), (2, "bob", 30)]


def test_a_report_a_crash_left_uncounted_is_counted_by_the_repair_once(scored, alice):
    board = best_board("best-7", window=leaderboard.ROLLING, window_days=7)
    report(alice, scored[0], 40, at(TODAY, 9))
    logged = {"programmer_id": alice.pk, "problem": "h1", "score": 7, "solved_at": at(TODAY, 10)}
    logged |= {"applied": False, "request": "lost", "logged_at": at(TODAY, 10)}
    mongo.scores().insert_one(logged)  # logged, then the process died
    with time_machine.travel(at(TODAY, 13), tick=False):
        assert listed(board, TODAY) == [(1, "Alice", 40)]
        for _ in range(2):
            assert services.solves_repair() in (0, 1)
            assert listed(board, TODAY) == [(1, "Alice", 47)]
        assert mongo.scores().count_documents({"applied": False}) == 0


def test_the_answer_form_of_a_scored_problem_takes_a_score(scored, alice):
    board = best_board("best-ever", window=leaderboard.ALL_TIME)
    heuristic = Problem.objects.create(slug="tsp", title="TSP", answer="42", scored=True)
    client = Client()
    client.login(username="alice", password="correct horse battery")
    with time_machine.travel(at(TODAY, 10), tick=False):
        assert b'name="score"' in client.get("/problems/tsp/").content
        Problem.objects.create(slug="plain", title="Plain", answer="1")
        assert b'name="score"' not in client.get("/problems/plain/").content
        refused = client.post("/problems/tsp/", {"answer": "42", "score": "-3"})
        assert refused.status_code == 400
        client.post("/problems/tsp/", {"answer": "42", "score": "120"})
        client.post("/problems/tsp/", {"answer": "41", "score": "900"})  # wrong: no score
        assert listed(board, TODAY) == [(1, "Alice", 120)]
    assert heuristic.scored


def test_a_score_reported_during_a_freeze_is_held_until_the_competition_ends(scored, alice, bob):
    """A frozen competition's scored problem: a report after the freeze moves no best-score
    board (its standings show pending cells; the boards must not tell), and counts once, on its
    own day, when the competition is over and the held reports are released."""
    from competitions import services as competitions

    board = best_board("best-all", window=leaderboard.ALL_TIME)
    h0 = scored[0]
    start, freeze, end = at(TODAY, 9), at(TODAY, 11), at(TODAY, 14)
    competitions.competition_create(
        slug="heuristic-cup",
        title="Heuristic Cup",
        start=start,
        end=end,
        freeze_at=freeze,
        problems=[h0],
    )
    report(alice, h0, 40, at(TODAY, 10))  # before the freeze: counts at once
    report(bob, h0, 90, at(TODAY, 12))  # after it: held
    report(alice, h0, 95, at(TODAY, 12, 30))  # held too, though better
    with time_machine.travel(at(TODAY, 13), tick=False):
        assert listed(board, TODAY) == [(1, "Alice", 40)]
        assert services.solves_release() == 0  # still frozen
        assert listed(board, TODAY) == [(1, "Alice", 40)]
    with time_machine.travel(at(TODAY, 14, 1), tick=False):
        assert services.solves_release() == 2
        assert services.solves_release() == 0  # once
        assert listed(board, TODAY) == [(1, "Alice", 95), (2, "bob", 90)]


def test_a_board_refresh_leaves_no_empty_entry_for_a_programmer_it_never_counted(scored, bob):
    """Bob reports no score: refreshing his boards (a repair, a new handle) must not store an
    empty entry for him, which a rebuild's dry run would count as one to remove from a
    healthy board."""
    board = best_board("best-7", window=leaderboard.ROLLING, window_days=7)
    with time_machine.travel(at(TODAY, 13), tick=False):
        services.programmer_refresh_boards(programmer=bob)
        assert entries.entries(board.slug).find_one({"_id": bob.pk}) is None
        report = services.board_rebuild(board=board, dry_run=True)
    assert (report.changed, report.removed) == (0, 0)

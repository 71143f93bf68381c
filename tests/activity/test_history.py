"""Rank history and arrows across a day boundary, and the forecast straight from the engine."""

import datetime as dt

import time_machine

from activity import mongo as activity_mongo
from activity import selectors, tasks
from activity.services import history
from activity.services.history import history_snapshot
from solutions import leaderboard
from solutions import selectors as board_selectors
from solutions.models import Board
from tests.activity.conftest import solve, solve_many
from tests.conftest import NOW
from tests.support.engine import VECTOR_DAILY, VECTOR_SCORES, VECTOR_TODAY, at_noon, many_problems

TODAY = leaderboard.epoch_day(NOW, "UTC")  # 2020-01-19, a Sunday
YESTERDAY = NOW - dt.timedelta(days=1)


def moves_on(board, day=None) -> list[tuple[str, int, str, int]]:
    page = board_selectors.board_page(board=board, day=day)
    return [
        (moved.row.handle, moved.row.rank, moved.direction, moved.places)
        for moved in selectors.board_moves(page)
    ]


def two_days_of_solves(problems, alice, bob, charlie) -> None:
    """Yesterday Alice solved 2 and Bob 1; today Bob solves 2 more and Charlie his first."""
    with time_machine.travel(YESTERDAY, tick=False):
        solve_many(alice, problems[:2])
        solve(bob, problems[0])
    solve_many(bob, problems[1:3])
    solve(charlie, problems[0])


def test_rows_show_the_places_moved_since_the_previous_days_final_board(
    activity_db, now, boards, problems, alice, bob, charlie
):
    two_days_of_solves(problems, alice, bob, charlie)
    board = boards["last-7-days"]
    assert moves_on(board) == [
        ("bob", 1, "up", 1),
        ("Alice", 2, "down", 1),
        ("charlie", 3, "new", 0),
    ]
    # The arrows compare with exactly what the profile says about the day before.
    for programmer, rank in ((alice, 1), (bob, 2)):
        standing = board_selectors.programmer_standing(
            board=board, programmer=programmer, day=TODAY - 1
        )
        assert standing.rank == rank
    # Yesterday's board compares with the day before it, when nobody was on the board.
    assert moves_on(board, TODAY - 1) == [("Alice", 1, "new", 0), ("bob", 2, "new", 0)]


def test_calendar_boards_show_no_arrows_on_the_first_day_of_a_period(
    activity_db, boards, problems, alice
):
    week = Board.objects.create(slug="this-week", title="This week", window=leaderboard.WEEK)
    monday = NOW + dt.timedelta(days=1)
    with time_machine.travel(monday, tick=False):
        solve(alice, problems[0])
        assert moves_on(week) == [("Alice", 1, "", 0)]


def test_history_snapshots_record_each_days_final_rank_across_midnight(
    activity_db, now, boards, problems, alice, bob, charlie
):
    board = boards["last-7-days"]
    with time_machine.travel(YESTERDAY + dt.timedelta(hours=6), tick=False):
        solve_many(alice, problems[:2])
        solve(bob, problems[0])
        first = history_snapshot(board=board)
        assert first.days == [*range(TODAY - 30, TODAY - 1), TODAY - 1]  # backfilled, then today
        assert first.documents == 2
        # Nothing changed: the next run has nothing to record.
        assert history_snapshot(board=board).days == []
        solve(charlie, problems[0])  # late in the day
    with time_machine.travel(NOW.replace(hour=0, minute=5), tick=False):
        solve_many(bob, problems[1:3])
        report = history_snapshot(board=board)
        assert report.days == [TODAY - 1, TODAY]  # yesterday's final board, and today's
        chart = selectors.rank_history(board=board, programmer=alice, days=3)
    assert chart == [
        (leaderboard.day_to_date(TODAY - 2), None),
        (leaderboard.day_to_date(TODAY - 1), 1),
        (leaderboard.day_to_date(TODAY), 2),
    ]
    charlie_yesterday = activity_mongo.rank_history().find_one(
        {"_id": selectors.history_id(board.slug, charlie.pk, TODAY - 1)}
    )
    assert (charlie_yesterday["rank"], charlie_yesterday["total"]) == (2, 3)  # tied with Bob


def recorded(board) -> list[dict]:
    """Every rank recorded for the board, in a stable order."""
    found = activity_mongo.rank_history().find({"board": board.slug}, {"expires_at": 0})
    return sorted(found, key=lambda document: document["_id"])


def history_forgotten(board) -> None:
    activity_mongo.rank_history().delete_many({"board": board.slug})
    activity_mongo.state().delete_many({})


def test_a_snapshot_in_small_steps_records_what_one_whole_run_does(
    activity_db, now, boards, problems, alice, bob, charlie, rivals
):
    """Steps of two ranks each, across pages, ties (Bob and Charlie share a rank across a step's
    border) and backfilled days, leave the same history as one run; no step records more."""
    board = boards["last-7-days"]
    with time_machine.travel(YESTERDAY, tick=False):
        solve_many(alice, problems[:3])
        solve_many(bob, problems[:2])
        solve_many(charlie, problems[:2])
        for rival in rivals:
            solve(rival, problems[0])
    solve(rivals[0], problems[1])
    whole = history_snapshot(board=board)
    expected = recorded(board)
    assert whole.documents == 14 and not whole.more  # 7 yesterday, 7 today
    history_forgotten(board)
    steps = []
    while not steps or steps[-1].more:
        steps.append(history_snapshot(board=board, budget=2, carry_on=bool(steps)))
    assert [step.documents for step in steps] == [2] * 7 + [0]  # the last finds the end
    assert recorded(board) == expected
    assert history_snapshot(board=board).days == []  # finished: the bookmark moved on


def test_a_step_that_carries_on_never_begins_a_snapshot(
    activity_db, now, boards, problems, alice, bob
):
    board = boards["last-7-days"]
    solve(alice, problems[0])
    history_snapshot(board=board)
    solve(bob, problems[0])  # the board changed: beat's next run records today again
    assert history_snapshot(board=board, budget=5, carry_on=True).days == []
    assert history_snapshot(board=board, budget=5).days == [TODAY]


def test_the_snapshot_task_queues_the_rest_of_a_large_board_behind_other_work(
    activity_db, now, boards, problems, alice, bob, charlie, rivals, monkeypatch
):
    """The task records STEP_DOCUMENTS ranks and queues a step that carries on, until done."""
    board = boards["last-7-days"]
    for programmer in (alice, bob, charlie, *rivals):
        solve(programmer, problems[0])
    queued = []
    monkeypatch.setattr(tasks, "STEP_DOCUMENTS", 3)
    monkeypatch.setattr(tasks.history_snapshot_task, "delay", lambda *a, **k: queued.append((a, k)))
    reports = [tasks.history_snapshot_task(board.pk)]
    while queued:
        args, kwargs = queued.pop()
        assert (args, kwargs) == ((board.pk,), {"carry_on": True})
        reports.append(tasks.history_snapshot_task(*args, **kwargs))
    assert [report["documents"] for report in reports] == [3, 3, 1]
    ranks = {d["programmer_id"]: d["rank"] for d in recorded(board) if d["day"] == TODAY}
    assert len(ranks) == 7 and set(ranks.values()) == {1}  # everybody tied on one solve
    assert history.STEP_DOCUMENTS >= history.WRITE_BATCH  # a step writes whole batches


def test_all_time_arrows_come_from_the_recorded_history(
    activity_db, now, boards, problems, alice, bob, charlie
):
    board = boards["all-time"]
    with time_machine.travel(YESTERDAY, tick=False):
        solve_many(alice, problems[:2])
        solve(bob, problems[0])
        history_snapshot(board=board)
    assert moves_on(board) == [("Alice", 1, "same", 0), ("bob", 2, "same", 0)]
    solve_many(bob, problems[1:3])
    solve(charlie, problems[0])
    assert moves_on(board) == [
        ("bob", 1, "up", 1),
        ("Alice", 2, "down", 1),
        ("charlie", 3, "new", 0),
    ]


def test_the_forecast_is_the_engines_sums_for_the_coming_days(activity_db, boards, alice):
    problems = iter(many_problems(sum(VECTOR_DAILY)))
    with time_machine.travel(at_noon(VECTOR_TODAY) + dt.timedelta(hours=6), tick=False):
        for age, count in enumerate(VECTOR_DAILY):
            for _ in range(count):
                solve(alice, next(problems), at_noon(VECTOR_TODAY - age))
        board = boards["last-7-days"]
        points = selectors.forecast_points(board=board, programmer=alice)
        assert [score for _, score in points] == [*VECTOR_SCORES, 0]  # 0: off the board
        assert [date for date, _ in points] == [
            leaderboard.day_to_date(VECTOR_TODAY + i) for i in range(8)
        ]
        # A calendar week's forecast runs to its Sunday; all-time boards never decay.
        week = Board.objects.create(slug="this-week", title="This week", window=leaderboard.WEEK)
        week_points = selectors.forecast_points(board=week, programmer=alice)
        assert [date.isoformat() for date, _ in week_points][-1] == "2020-01-26"
        assert selectors.forecast_points(board=boards["all-time"], programmer=alice) == []
    for date, score in points:  # each day's board, once it comes, says what the forecast did
        day = leaderboard.date_to_day(date)
        with time_machine.travel(at_noon(day), tick=False):
            standing = board_selectors.programmer_standing(board=board, programmer=alice, day=day)
            assert standing.score == score

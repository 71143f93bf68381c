"""The leaderboard engine against the embedded server: forward-dated sums, decay, late solves,
midnight in the leaderboard time zone, and solves that count once."""

import datetime as dt
import threading
import time
from unittest import mock

import pytest
import time_machine

from solutions import clock, leaderboard, mongo, selectors, services
from solutions.leaderboard import (
    applier,
    days_kept,
    entries,
    expressions,
    journals,
    lease,
    orders,
    sets,
    tree,
)
from solutions.models import Board
from tests.conftest import NOW
from tests.support.engine import (
    VECTOR_DAILY,
    VECTOR_SCORES,
    VECTOR_TODAY,
    at_noon,
    closing_sql,
    every_board_shows,
    many_problems,
    orders_hold_the_entries,
    solve_on,
)


def score(board, programmer, day):
    return selectors.programmer_standing(board=board, programmer=programmer, day=day).score


def test_window_sums_reproduce_the_article_vector():
    daily = {VECTOR_TODAY - age: n for age, n in enumerate(VECTOR_DAILY)}
    days = range(VECTOR_TODAY, VECTOR_TODAY + 7)
    sums = leaderboard.window_sums(daily, leaderboard.Window(leaderboard.ROLLING, 7), days)
    assert list(sums.values()) == VECTOR_SCORES


def test_solves_give_the_article_scores_today_and_as_forecast(mongodb, boards, alice):
    problems = iter(many_problems(sum(VECTOR_DAILY)))
    with time_machine.travel(at_noon(VECTOR_TODAY) + dt.timedelta(hours=6), tick=False):
        for age, count in enumerate(VECTOR_DAILY):
            for _ in range(count):
                assert solve_on(alice, next(problems), at_noon(VECTOR_TODAY - age))
        board = boards["last-7-days"]
        assert score(board, alice, VECTOR_TODAY) == VECTOR_SCORES[0]
        forecast = selectors.programmer_around(
            board=board, programmer=alice, around=0, forecast_days=6
        ).forecast
        assert [points for _, points in forecast] == VECTOR_SCORES[1:]
    for i, expected in enumerate(VECTOR_SCORES[1:], start=1):  # and each day as it comes
        with time_machine.travel(at_noon(VECTOR_TODAY + i), tick=False):
            assert score(board, alice, VECTOR_TODAY + i) == expected
        assert score(boards["all-time"], alice, VECTOR_TODAY) == 18


def test_a_quiet_programmer_decays_off_the_board_after_n_days(mongodb, boards, alice, bob):
    board = boards["last-7-days"]
    problems = many_problems(2)
    with time_machine.travel(at_noon(VECTOR_TODAY), tick=False):
        solve_on(alice, problems[0], at_noon(VECTOR_TODAY))
    for later in range(1, 8):
        day = VECTOR_TODAY + later
        with time_machine.travel(at_noon(day), tick=False):
            page = selectors.board_page(board=board)
            on_board = [row.handle for row in page.rows]
            assert on_board == (["Alice"] if later < 7 else [])
            assert selectors.programmer_standing(board=board, programmer=alice).rank == (
                1 if later < 7 else None
            )
    # All-time never forgets.
    with time_machine.travel(at_noon(VECTOR_TODAY + 8), tick=False):
        assert [row.handle for row in selectors.board_page(board=boards["all-time"]).rows] == [
            "Alice"
        ]


def test_an_entry_keeps_only_the_days_a_rebuild_would_whatever_the_gap_between_solves(
    boards_of_every_kind, alice, settings
):
    """Old days leave an entry on the first change of a day: by name after a short gap, by a
    look at every day after a long one. Either way the entry is what a rebuild computes."""
    settings.LEADERBOARD_MAX_LATE_DAYS = 2
    settings.LEADERBOARD_HISTORY_DAYS = 3
    gaps = [0, 1, 1, 2, expressions.TRIM_BY_NAME, expressions.TRIM_BY_NAME + 1, 9, 0, 1]
    problems = many_problems(len(gaps))
    day = VECTOR_TODAY
    for problem, gap in zip(problems, gaps, strict=True):
        day += gap
        with time_machine.travel(at_noon(day), tick=False):
            solve_on(alice, problem, at_noon(day) - dt.timedelta(days=gap % 3, hours=1))
            solves = list(mongo.solves().find({"programmer_id": alice.pk}))
            for slug, board in boards_of_every_kind.items():
                stored = entries.entries(slug).find_one({"_id": alice.pk})
                rebuilt = services.entry_from_solves(board, alice, solves, day)
                assert entries.comparable(stored) == entries.comparable(rebuilt), (slug, gap)
    kept = entries.entries("last-7-days").find_one({"_id": alice.pk})
    solved_on = {leaderboard.epoch_day(s["solved_at"], "UTC") for s in solves}
    assert len(kept["days"]) < len(solved_on)  # old days did leave
    assert min(map(int, kept["sums"])) >= day - settings.LEADERBOARD_HISTORY_DAYS


def test_a_stray_key_among_an_entrys_days_does_not_stop_its_next_solve(mongodb, boards, alice):
    """A key that is no day number (only damage leaves one) goes at the next look at every day,
    instead of failing that update, and with it every solve of the programmer on the board."""
    problems = many_problems(2)
    with time_machine.travel(at_noon(VECTOR_TODAY), tick=False):
        solve_on(alice, problems[0], at_noon(VECTOR_TODAY))
    rolling = ["last-7-days", "last-30-days"]
    for slug in rolling:
        entries.entries(slug).update_one({"_id": alice.pk}, {"$set": {"days.x": 1}})
    later = VECTOR_TODAY + expressions.TRIM_BY_NAME + 5  # past trimming by name
    with time_machine.travel(at_noon(later), tick=False):
        assert solve_on(alice, problems[1], at_noon(later))
        assert [score(boards[slug], alice, later) for slug in rolling] == [1, 2]
    for slug in rolling:
        assert "x" not in entries.entries(slug).find_one({"_id": alice.pk})["days"]


def test_a_late_solve_changes_the_past_days_it_touches(mongodb, boards, alice, bob):
    board = boards["last-7-days"]
    problems = many_problems(3)
    with time_machine.travel(at_noon(VECTOR_TODAY), tick=False):
        solve_on(bob, problems[0], at_noon(VECTOR_TODAY - 3))
        solve_on(alice, problems[0], at_noon(VECTOR_TODAY - 1))
        before = selectors.board_page(board=board, day=VECTOR_TODAY - 3)
        assert [(r.handle, r.score) for r in before.rows] == [("bob", 1)]
        # Alice's judge reports a solve from five days ago only now.
        solve_on(alice, problems[1], at_noon(VECTOR_TODAY - 5))
        after = selectors.board_page(board=board, day=VECTOR_TODAY - 3)
        assert [(r.handle, r.score) for r in after.rows] == [("Alice", 1), ("bob", 1)]
        assert [r.rank for r in after.rows] == [1, 1]
        assert score(board, alice, VECTOR_TODAY - 5) == 1
        assert score(board, alice, VECTOR_TODAY) == 2
        # Day -6 is before the late solve: unchanged.
        assert selectors.board_page(board=board, day=VECTOR_TODAY - 6).rows == []


def test_midnight_in_the_leaderboard_time_zone_starts_the_new_day(mongodb, boards, alice, settings):
    settings.LEADERBOARD_TIME_ZONE = "Asia/Dhaka"  # UTC+6
    board = boards["last-7-days"]
    problems = many_problems(2)
    dhaka_midnight = dt.datetime(2020, 1, 20, 0, 0, tzinfo=dt.timezone(dt.timedelta(hours=6)))
    with time_machine.travel(dhaka_midnight + dt.timedelta(hours=1), tick=False):
        solve_on(alice, problems[0], dhaka_midnight)  # 18:00 UTC on the 19th
        solve_on(alice, problems[1], dhaka_midnight - dt.timedelta(seconds=1))
        assert clock.today() == leaderboard.date_to_day(dt.date(2020, 1, 20))
        jan_19 = leaderboard.date_to_day(dt.date(2020, 1, 19))
        assert score(board, alice, jan_19) == 1  # only the solve a second before midnight
        assert score(board, alice, jan_19 + 1) == 2
    with time_machine.travel(dhaka_midnight + dt.timedelta(days=6, hours=1), tick=False):
        assert score(board, alice, jan_19 + 7) == 1  # the 19th's solve has left the window


def test_a_repeated_solve_counts_once(mongodb, boards, alice):
    problem = many_problems(1)[0]
    with time_machine.travel(at_noon(VECTOR_TODAY), tick=False):
        assert solve_on(alice, problem, at_noon(VECTOR_TODAY)) is True
        assert solve_on(alice, problem, at_noon(VECTOR_TODAY) - dt.timedelta(hours=1)) is False
        assert solve_on(alice, problem, at_noon(VECTOR_TODAY - 1)) is False
        for board in boards.values():
            standing = selectors.programmer_standing(
                board=board, programmer=alice, day=VECTOR_TODAY
            )
            assert (standing.score, standing.rank, standing.total) == (1, 1, 1)


def test_a_points_board_sums_problem_points(mongodb, boards, alice):
    points_board = boards["last-7-days"]
    points_board.metric = points_board.POINTS
    points_board.save()
    first, second = many_problems(2)
    second.points = 250
    second.save()
    with time_machine.travel(at_noon(VECTOR_TODAY), tick=False):
        solve_on(alice, first, at_noon(VECTOR_TODAY))
        solve_on(alice, second, at_noon(VECTOR_TODAY))
        assert score(points_board, alice, VECTOR_TODAY) == 350


def test_ties_share_a_rank_and_the_earlier_one_is_listed_first(
    mongodb, boards, alice, bob, charlie
):
    board = boards["last-7-days"]
    problems = many_problems(2)
    with time_machine.travel(at_noon(VECTOR_TODAY), tick=False):
        solve_on(charlie, problems[0], at_noon(VECTOR_TODAY) - dt.timedelta(hours=3))
        solve_on(charlie, problems[1], at_noon(VECTOR_TODAY) - dt.timedelta(hours=2))
        solve_on(bob, problems[0], at_noon(VECTOR_TODAY) - dt.timedelta(hours=1))
        solve_on(alice, problems[0], at_noon(VECTOR_TODAY))
        rows = selectors.board_page(board=board).rows
        assert [(r.rank, r.handle, r.score) for r in rows] == [
            (1, "charlie", 2),
            (2, "bob", 1),
            (2, "Alice", 1),
        ]
        board.ties = board.UNIQUE
        board.save()
        rows = selectors.board_page(board=board).rows
        assert [(r.rank, r.handle) for r in rows] == [(1, "charlie"), (2, "bob"), (3, "Alice")]
        assert selectors.programmer_standing(board=board, programmer=alice).rank == 3


@pytest.mark.parametrize(
    "moment",
    [
        dt.datetime(2020, 1, 19, 12, tzinfo=dt.UTC) + dt.timedelta(minutes=6),
        dt.datetime(2019, 12, 19, 11, tzinfo=dt.UTC),
    ],
)
def test_solves_in_the_future_or_too_late_are_refused(mongodb, boards, alice, now, moment):
    with pytest.raises(services.SolveRejected):
        solve_on(alice, many_problems(1)[0], moment)
    assert mongodb.solves.count_documents({}) == 0


def test_tomorrow_is_prepared_before_midnight_and_still_takes_the_evenings_solves(
    mongodb, boards, alice, bob
):
    """Alice solves at noon; Bob's solve at 23:30 prepares tomorrow's orders (the last hour of a
    day) and moves him on both days. At midnight tomorrow's board lists both, read as any day's,
    and every order up to the frontier holds the entries."""
    board = boards["last-7-days"]
    problems = many_problems(1)
    evening = at_noon(VECTOR_TODAY) + dt.timedelta(hours=11, minutes=30)
    with time_machine.travel(evening, tick=False):
        solve_on(alice, problems[0], at_noon(VECTOR_TODAY))
        solve_on(bob, problems[0], evening)
        assert journals.journal_heads([board.slug])[board.slug].frontier == VECTOR_TODAY + 1
        assert handles_on(board) == ["Alice", "bob"]
    with time_machine.travel(evening + dt.timedelta(minutes=30), tick=False):  # midnight
        assert [row.handle for row in selectors.board_page(board=board).rows] == ["Alice", "bob"]
        orders_hold_the_entries(board, range(VECTOR_TODAY, VECTOR_TODAY + 2))


def test_a_solve_logged_before_a_crash_is_counted_once_by_the_repair(mongodb, boards, alice):
    board = boards["last-7-days"]
    first, second = many_problems(2)
    moment = at_noon(VECTOR_TODAY)
    with time_machine.travel(moment, tick=False):
        solve_on(alice, first, moment - dt.timedelta(hours=2))
        # The process died after logging the second solve, before the boards counted it.
        logged = moment - dt.timedelta(minutes=10)
        mongodb.solves.insert_one(
            {
                "logged_at": logged,
                "programmer_id": alice.pk,
                "problem": second.slug,
                "points": second.points,
                "solved_at": logged,
                "applied": False,
            }
        )
        assert score(board, alice, VECTOR_TODAY) == 1
        assert services.solves_repair() == 1
        assert score(board, alice, VECTOR_TODAY) == 2
        assert services.solves_repair() == 0
        assert score(board, alice, VECTOR_TODAY) == 2
        assert selectors.programmer_standing(board=board, programmer=alice).total == 1


def stored_entry(board: Board, programmer) -> dict:
    return entries.entries(board.slug).find_one({"_id": programmer.pk})


def test_an_entry_the_orders_hold_as_it_is_names_only_its_revision_as_placed(
    mongodb, boards, alice
):
    """Once a solve is answered the orders hold Alice's entry as it is, so `placed` is its
    revision alone, not her keys a second time; her next solve moves her from exactly those."""
    board = boards["last-7-days"]
    first, second = many_problems(2)
    with time_machine.travel(at_noon(VECTOR_TODAY), tick=False):
        solve_on(alice, first, at_noon(VECTOR_TODAY - 1))
        entry = stored_entry(board, alice)
        assert entry["placed"] == {"rev": entry["rev"]}
        solve_on(alice, second, at_noon(VECTOR_TODAY))
        entry = stored_entry(board, alice)
        assert entry["placed"] == {"rev": entry["rev"]}
        page = selectors.board_page(board=board, day=VECTOR_TODAY)
        assert [(r.handle, r.score) for r in page.rows] == [("Alice", 2)]
        orders_hold_the_entries(board, range(VECTOR_TODAY - 1, VECTOR_TODAY + 7))


def test_a_solve_the_orders_have_not_followed_yet_keeps_what_they_hold_in_full(
    mongodb, boards, alice, bob
):
    """Alice's second solve is counted by a request that dies before moving the orders: her
    entry writes out the keys the orders still hold, and the repair moves her from those (not
    from her new keys, which would leave her old place listed)."""
    board = boards["last-7-days"]
    first, second = many_problems(2)
    with time_machine.travel(at_noon(VECTOR_TODAY), tick=False):
        solve_on(alice, first, at_noon(VECTOR_TODAY - 1))
        solve_on(bob, first, at_noon(VECTOR_TODAY))
        held = stored_entry(board, alice)["keys"]
        with mock.patch.object(applier, "orders_catch_up"):
            solve_on(alice, second, at_noon(VECTOR_TODAY))
        entry = stored_entry(board, alice)
        assert entry["placed"]["keys"] == held
        assert entry["keys"] != held
    with time_machine.travel(at_noon(VECTOR_TODAY) + dt.timedelta(minutes=5), tick=False):
        assert services.solves_repair() == 1
        entry = stored_entry(board, alice)
        assert entry["placed"] == {"rev": entry["rev"]}
        page = selectors.board_page(board=board, day=VECTOR_TODAY)
        assert [(r.handle, r.score) for r in page.rows] == [("Alice", 2), ("bob", 1)]
        orders_hold_the_entries(board, range(VECTOR_TODAY - 1, VECTOR_TODAY + 7))


def test_a_solve_counted_while_another_request_moves_the_orders_is_listed(mongodb, boards, alice):
    """Two solves of Alice at once: the other request's applier reads her entry, this request
    counts its solve, then the applier takes her off the pending list as applied. This request
    still waits until the orders hold its count (it used to stop as soon as she left the list)."""
    board = boards["last-7-days"]
    first, second = many_problems(2)
    moment = at_noon(VECTOR_TODAY)
    ours = entries.SolveEvent(
        "ours", alice.pk, alice.handle, tuple(alice.group_scopes()), VECTOR_TODAY, 1, moment
    )
    real_apply = applier._orders_apply

    def our_count_lands_midway(keys, heads):
        writes = real_apply(keys, heads)
        entries.entries_count_solve([(board.slug, board.spec, ours)], VECTOR_TODAY)
        return writes

    with time_machine.travel(moment, tick=False):
        with mock.patch.object(applier, "_orders_apply", side_effect=our_count_lands_midway):
            solve_on(alice, first, moment)  # the other request
        # Ours, waiting for the orders.
        applier.orders_catch_up([(board.slug, alice.pk)], finish=services.orders_moved)
        rows = selectors.board_page(board=board).rows
    assert [(row.handle, row.score) for row in rows] == [("Alice", 2)]


def calendar_boards():
    week = Board.objects.create(slug="week", title="This week", window=leaderboard.WEEK)
    month = Board.objects.create(slug="month", title="This month", window=leaderboard.MONTH)
    mongo.ensure_indexes([week.slug, month.slug])
    return week, month


def handles_on(board, date: dt.date | None = None) -> list[str]:
    day = None if date is None else leaderboard.date_to_day(date)
    return [row.handle for row in selectors.board_page(board=board, day=day).rows]


def test_weeks_start_at_monday_midnight_in_the_leaderboard_time_zone(mongodb, alice, bob, settings):
    settings.LEADERBOARD_TIME_ZONE = "Asia/Dhaka"  # UTC+6
    week, _ = calendar_boards()
    problem = many_problems(1)[0]
    with time_machine.travel(dt.datetime(2020, 1, 14, 12, tzinfo=dt.UTC), tick=False):
        solve_on(alice, problem, dt.datetime(2020, 1, 12, 17, 30, tzinfo=dt.UTC))  # Sun 23:30
        solve_on(bob, problem, dt.datetime(2020, 1, 12, 18, 30, tzinfo=dt.UTC))  # Mon 00:30
        assert handles_on(week) == ["bob"]
        assert handles_on(week, dt.date(2020, 1, 12)) == ["Alice"]  # last day of the week before


def test_months_start_at_midnight_of_the_first_in_the_leaderboard_time_zone(
    mongodb, alice, bob, settings
):
    settings.LEADERBOARD_TIME_ZONE = "Asia/Dhaka"
    _, month = calendar_boards()
    problem = many_problems(1)[0]
    with time_machine.travel(dt.datetime(2020, 2, 1, 12, tzinfo=dt.UTC), tick=False):
        solve_on(alice, problem, dt.datetime(2020, 1, 31, 17, 59, tzinfo=dt.UTC))  # 31 Jan 23:59
        solve_on(bob, problem, dt.datetime(2020, 1, 31, 18, 0, tzinfo=dt.UTC))  # 1 Feb 00:00
        assert handles_on(month) == ["bob"]
        assert handles_on(month, dt.date(2020, 1, 31)) == ["Alice"]  # January's final board
        forecast = selectors.programmer_around(
            board=month, programmer=bob, around=0, forecast_days=29
        ).forecast
        assert [score for _, score in forecast] == [1] * 28 + [0]  # February 2020 has 29 days


@pytest.mark.parametrize("set_max,node_max", [(1024, 128), (2, 128), (1, 2)])
def test_solves_of_the_same_programmers_at_once_move_every_order_exactly_once(
    mongodb, boards, alice, bob, charlie, now, monkeypatch, set_max, node_max
):
    monkeypatch.setattr(sets, "SET_MAX", set_max)
    monkeypatch.setattr(tree, "NODE_MAX", node_max)  # 2: nodes over sets of one (see `tree`)
    monkeypatch.setattr(tree, "NODE_FILL", max(2, node_max // 2))
    monkeypatch.setattr(orders, "INLINE_MAX", min(orders.INLINE_MAX, set_max))
    monkeypatch.setattr(sets, "ARRIVALS_MAX", min(sets.ARRIVALS_MAX, set_max))
    problems = many_problems(4)
    people = [alice, bob, charlie]
    barrier = threading.Barrier(len(people) * len(problems))

    def solve(programmer, problem, minutes):
        barrier.wait(10)
        solve_on(programmer, problem, NOW - dt.timedelta(minutes=minutes))

    threads = [
        threading.Thread(target=closing_sql(solve), args=(programmer, problem, n))
        for n, (programmer, problem) in enumerate((p, q) for p in people for q in problems)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    today = leaderboard.epoch_day(NOW, "UTC")
    every_board_shows(boards, [("Alice", 4), ("bob", 4), ("charlie", 4)])
    for board in boards.values():
        orders_hold_the_entries(board, range(today, today + board.spec.span))
    assert mongodb.solves.count_documents({"applied": True}) == 12


def test_a_solve_that_waited_out_a_stuck_holder_is_listed_and_marked_applied_by_the_next_batch(
    mongodb, boards, alice, bob, now, monkeypatch
):
    """Another process took the lease and hangs: Alice's solve is counted and listed as pending,
    waits its time out and is refused as behind (a 503, never a 201 for a solve not applied).
    Nobody has moved her yet, so her solve is not marked applied (a retry or the repair task
    finishes it). Once the lease is free, Bob's solve moves both of them in one batch and marks
    both solves applied."""
    monkeypatch.setattr(applier, "APPLY_WAIT_SECONDS", 0.1)
    holder, _pending = lease.take("stuck", [])
    assert holder
    first, second = many_problems(2)
    with pytest.raises(applier.OrdersBehind):
        solve_on(alice, first, NOW)
    board = boards["last-7-days"]
    assert selectors.board_page(board=board).rows == []
    assert mongodb.solves.find_one({"programmer_id": alice.pk})["applied"] is False
    lease.release("stuck", None)
    solve_on(bob, second, NOW)
    every_board_shows(boards, [("Alice", 1), ("bob", 1)])
    assert mongodb.solves.count_documents({"applied": True}) == 2


def solves_listed(solve, people, boards) -> list[threading.Thread]:
    """Start `solve(programmer)` in a thread for each of `people`, and return their threads once
    all of them are listed as pending on every board (waiting for a holder)."""
    threads = [threading.Thread(target=closing_sql(solve), args=(p,)) for p in people]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 10
    wanted = len(people) * len(boards)
    while len(lease.appliers().find_one({"_id": lease.LEASE})["pending"]) < wanted:
        assert time.monotonic() < deadline, "the solves were never listed"
        time.sleep(0.01)
    return threads


def test_solves_waiting_in_one_process_look_at_the_lease_through_one_driver_and_move_in_one_batch(
    mongodb, boards, alice, bob, charlie, now, monkeypatch
):
    """Another process holds the lease: three solves of this process wait for it together. Only
    one of them (the driver) looks whether they were moved, so the applier document is read
    about as often as for one waiting solve, not three times as often. Once the lease is free,
    all three are moved in one batch, and that batch marks all three solves applied."""
    looks = []
    real_look = lease.pending_now

    def counted_look():
        looks.append(threading.get_ident())
        return real_look()

    monkeypatch.setattr(lease, "pending_now", counted_look)
    holder, _pending = lease.take("another process", [])
    assert holder
    problem = many_problems(1)[0]
    people = [alice, bob, charlie]

    def solve(programmer):
        solve_on(programmer, problem, NOW)

    threads = solves_listed(solve, people, boards)
    time.sleep(0.4)  # all three wait for the other process's holder
    assert len(set(looks)) == 1  # one driver looks for all of them
    assert mongodb.solves.count_documents({"applied": True}) == 0
    lease.release("another process", None)
    for thread in threads:
        thread.join(10)
    every_board_shows(boards, [("Alice", 1), ("bob", 1), ("charlie", 1)])
    assert mongodb.solves.count_documents({"applied": True}) == 3
    assert lease.appliers().find_one({"_id": lease.LEASE})["pending"] == []


def test_a_solve_moved_by_another_request_answers_only_once_its_batch_marked_it_applied(
    mongodb, boards, alice, bob, charlie, now, monkeypatch
):
    """Three solves wait for another process's holder and are then moved in one batch; its
    "applied" marks are slow to be written. No solve answers before its mark is in the log: a
    retry, or a judge asking again, never meets a solve that answered but looks unfinished."""
    real_solves = mongo.solves

    class SlowToMark:
        def __init__(self, collection):
            self._collection = collection

        def __getattr__(self, name):
            return getattr(self._collection, name)

        def update_many(self, *args, **kwargs):
            time.sleep(0.3)
            return self._collection.update_many(*args, **kwargs)

    monkeypatch.setattr(mongo, "solves", lambda: SlowToMark(real_solves()))
    holder, _pending = lease.take("another process", [])
    assert holder
    problem = many_problems(1)[0]
    people = [alice, bob, charlie]
    applied_when_answered = {}

    def solve(programmer):
        solve_on(programmer, problem, NOW)
        logged = real_solves().find_one({"programmer_id": programmer.pk})
        applied_when_answered[programmer.handle] = logged["applied"]

    threads = solves_listed(solve, people, boards)
    lease.release("another process", None)
    for thread in threads:
        thread.join(10)
    assert applied_when_answered == {p.handle: True for p in people}


def order_days(board: Board) -> set[int]:
    """The days a board has orders of (manifests), read straight from the collection."""
    found = orders.orders().find({"_id": {"$regex": f"^{board.slug}\\|[0-9]"}}, {"_id": 1})
    return {int(doc["_id"].split("|")[1]) for doc in found}


def test_orders_of_days_past_the_history_kept_are_pruned_and_nothing_newer(
    mongodb, boards, alice, bob, settings, monkeypatch
):
    """Every day leaves its orders behind; the hourly prune drops those older than the history
    kept, and the final boards still kept read as before."""
    settings.LEADERBOARD_HISTORY_DAYS = 3
    monkeypatch.setattr(journals, "JOURNAL_MAX", 0)  # every solve's moves go into the manifests
    board, all_time = boards["last-7-days"], boards["all-time"]
    first, second = many_problems(2)
    start, later = VECTOR_TODAY, VECTOR_TODAY + 8  # Alice counts on days start..start+6
    with time_machine.travel(at_noon(start), tick=False):
        solve_on(alice, first, at_noon(start))
    with time_machine.travel(at_noon(later), tick=False):
        solve_on(bob, second, at_noon(later))
        oldest = days_kept.history_from(later)  # start + 5
        assert min(order_days(board)) == start
        kept = {
            day: handles_on(board, leaderboard.day_to_date(day)) for day in range(oldest, later)
        }
        assert kept[oldest] == ["Alice"]

        assert services.orders_prune() > 0

        assert min(order_days(board)) == oldest
        # No day after today has orders; Alice's last day's is empty and kept.
        assert order_days(board) == set(range(oldest, later + 1))
        for day, handles in kept.items():
            assert handles_on(board, leaderboard.day_to_date(day)) == handles
        assert handles_on(board) == ["bob"]
        assert sorted(handles_on(all_time)) == ["Alice", "bob"]
        assert services.orders_prune() == 0  # nothing left to drop until the next day

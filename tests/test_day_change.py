"""A new day's orders, made from the day before by the moves the day brings (`day_change`):
across midnight in the leaderboard's time zone every board is exact at every instant, whoever
prepares the day (a solve in its last hour, the first solve or the first read after midnight),
through late solves, programmers who fall off that night, a calendar month's end, and a
preparation stopped midway. Every board day is compared with a count of the solves log."""

from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict
from unittest import mock
from zoneinfo import ZoneInfo

import pytest
import time_machine

from solutions import clock, leaderboard, mongo, selectors, services
from solutions.leaderboard import (
    day_change,
    day_copies,
    journals,
    lease,
    order_writes,
    orders,
    sets,
)
from solutions.models import Board, Problem, Programmer

TZ = "Asia/Dhaka"  # UTC+6: the leaderboard's midnight is 18:00 UTC
DAY = leaderboard.date_to_day(dt.date(2020, 1, 30))  # a Thursday; the month ends on Friday


def at(day: int, hour: int, minute: int = 0, second: int = 0) -> dt.datetime:
    """A moment of an epoch day in the leaderboard's time zone."""
    local = dt.datetime.combine(leaderboard.day_to_date(day), dt.time(hour, minute, second))
    return local.replace(tzinfo=ZoneInfo(TZ)).astimezone(dt.UTC)


@pytest.fixture
def site(mongodb, boards, settings):
    """The default boards and a calendar month, in Dhaka's time, with a few problems."""
    settings.LEADERBOARD_TIME_ZONE = TZ
    month = Board.objects.create(slug="this-month", title="This month", window=leaderboard.MONTH)
    mongo.ensure_indexes([*boards, month.slug])
    boards["this-month"] = month
    problems = [Problem.objects.create(slug=f"d{n}", title=f"D{n}", answer="1") for n in range(12)]
    return boards, iter(problems)


@pytest.fixture
def dave(db):
    return services.programmer_create(user=None, handle="dave", country="BD")


def solve(programmer, problem, solved_at, reported_at=None):
    with time_machine.travel(reported_at or solved_at, tick=False):
        return services.solve_record(programmer=programmer, problem=problem, solved_at=solved_at)


def counted(board: Board, day: int, scope: str = "") -> list[tuple[int, str, int]]:
    """(rank, handle, score) of everybody on a board day (in a group's `scope`), counted from
    the solves log alone."""
    daily: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    latest: dict[int, dict[int, dt.datetime]] = defaultdict(dict)
    for logged in mongo.solves().find():
        pid, solve_day = logged["programmer_id"], services.solve_day(logged["solved_at"])
        daily[pid][solve_day] += board.value_of(logged["points"])
        latest[pid][solve_day] = max(
            latest[pid].get(solve_day, logged["solved_at"]), logged["solved_at"]
        )
    places = []
    for programmer in Programmer.objects.filter(pk__in=list(daily)):
        if scope and scope not in programmer.group_scopes():
            continue
        counts = daily[programmer.pk]
        if board.spec.is_all_time:
            score, reached = sum(counts.values()), max(latest[programmer.pk].values())
        else:
            score = leaderboard.window_sums(counts, board.spec, [day])[day]
            reached = leaderboard.reached_at(latest[programmer.pk], board.spec, day)
        if score > 0:
            places.append((score, reached, programmer.handle))
    places.sort(key=lambda place: (-place[0], place[1], place[2].lower()))
    return [(1 + sum(o > s for o, _, _ in places), h, s) for s, _, h in places]


def listed(board: Board, day: int, scope: str = "") -> list[tuple[int, str, int]]:
    page = selectors.board_page(board=board, day=day, page_size=100, scope=scope)
    return [(row.rank, row.handle, row.score) for row in page.rows]


def every_board_is_counted(boards: dict[str, Board], days: range) -> None:
    for board in boards.values():
        for day in [days[-1]] if board.spec.is_all_time else days:
            assert listed(board, day) == counted(board, day), (board.slug, day)


def every_group_is_counted(boards: dict[str, Board], days: range, scopes: list[str]) -> None:
    for board in boards.values():
        for day in [days[-1]] if board.spec.is_all_time else days:
            for scope in scopes:
                assert listed(board, day, scope) == counted(board, day, scope), (board, day, scope)


def in_lists(command) -> list[list]:
    """Every `$in` list of a command as it was sent (at any depth of its document)."""
    found, waiting = [], [command.document]
    while waiting:
        value = waiting.pop()
        if isinstance(value, dict):
            found += [value["$in"]] if isinstance(value.get("$in"), list) else []
            waiting += list(value.values())
        elif isinstance(value, list):
            waiting += value
    return found


def frontier(board: Board) -> int | None:
    return journals.journal_heads([board.slug])[board.slug].frontier


@pytest.fixture
def evening(site, alice, bob, charlie):
    """Alice solved six days ago and not since: she falls off the 7-day board at midnight;
    Bob solved this morning; Charlie solved yesterday and today. Nothing runs in the last hour
    of today."""
    boards, problems = site
    solve(alice, next(problems), at(DAY - 6, 9))
    solve(bob, next(problems), at(DAY, 8))
    solve(charlie, next(problems), at(DAY - 1, 20))
    solve(charlie, next(problems), at(DAY, 10))
    return boards, problems


def test_a_board_read_at_midnight_is_the_new_days_though_nobody_prepared_it(evening, alice):
    boards, _ = evening
    week = boards["last-7-days"]
    assert frontier(week) == DAY  # nothing ran in the last hour
    with time_machine.travel(at(DAY + 1, 0), tick=False):
        assert clock.today() == DAY + 1
        assert [handle for _, handle, _ in listed(week, DAY + 1)] == ["charlie", "bob"]
        assert frontier(week) == DAY + 1  # its first read waited for it to be made
        assert "Alice" in [handle for _, handle, _ in listed(week, DAY)]  # yesterday's final board
        every_board_is_counted(boards, range(DAY - 7, DAY + 2))


def test_a_read_that_prepares_the_day_leaves_whoever_is_pending_to_their_own_request(evening, bob):
    """The reader prepares the day under the lease but places nobody pending: placing them is
    finished by the requests that listed them (their solves marked applied, with the batch), so
    it is for those requests, or the repair task, to do."""
    boards, _ = evening
    week = boards["last-7-days"]
    waiting = lease.item(week.slug, bob.pk, "another-request")
    lease.pending_add([waiting])
    with time_machine.travel(at(DAY + 1, 0), tick=False):
        assert [handle for _, handle, _ in listed(week, DAY + 1)] == ["charlie", "bob"]
        assert frontier(week) == DAY + 1
        assert waiting in lease.pending_now()[0]
        services.solves_repair()
        assert waiting not in lease.pending_now()[0]


def test_the_first_solve_after_midnight_prepares_the_day_then_counts(evening, dave):
    boards, problems = evening
    solve(dave, next(problems), at(DAY + 1, 0, 0, 1))
    assert all(
        frontier(board) == DAY + 1 for board in boards.values() if not board.spec.is_all_time
    )
    with time_machine.travel(at(DAY + 1, 0, 1), tick=False):
        every_board_is_counted(boards, range(DAY - 7, DAY + 2))


def test_a_solve_in_the_last_hour_begins_tomorrow_and_the_task_makes_it_while_solves_go_on(
    evening, alice, dave
):
    """The last hour's first batch begins tomorrow (its orders copies of today's); the solves
    go on, each placed at once on today's boards, while the prepare task moves tomorrow's
    orders off the lease; the next batch finishes tomorrow with whoever moved meanwhile: Alice,
    who falls off the week tonight and comes back, and Dave, new on every board."""
    boards, problems = evening
    week = boards["last-7-days"]
    solve(dave, next(problems), at(DAY, 23, 10))
    assert journals.journal_read(week.slug)["prep"]["day"] == DAY + 1
    assert frontier(week) == DAY  # begun, not made
    with time_machine.travel(at(DAY, 23, 11), tick=False):
        dated = [board for board in boards.values() if not board.spec.is_all_time]
        assert services.days_prepare() == len(dated)  # every dated board's pass
    solve(alice, next(problems), at(DAY, 23, 12))  # after the pass: finished with her
    solve(dave, next(problems), at(DAY, 23, 13))
    assert frontier(week) == DAY + 1
    with time_machine.travel(at(DAY, 23, 20), tick=False):
        every_board_is_counted(boards, range(DAY - 7, DAY + 2))  # tomorrow, already made
    with time_machine.travel(at(DAY + 1, 0), tick=False):
        every_board_is_counted(boards, range(DAY - 7, DAY + 2))


@pytest.mark.parametrize("journal_max", [journals.JOURNAL_MAX, 0])
def test_solves_between_the_beginning_and_the_pass_count_on_tomorrow_too(
    evening, alice, dave, monkeypatch, journal_max
):
    """Solves placed after tomorrow was begun and before its pass: the pass moves everybody from
    what the orders held when it began, and the finish moves them on from there. With a journal
    of one programmer, each batch folds today's orders, whose documents tomorrow's copies share:
    the fold must write new ones, not change those in place."""
    monkeypatch.setattr(journals, "JOURNAL_MAX", journal_max)
    boards, problems = evening
    solve(dave, next(problems), at(DAY, 23, 10))
    solve(alice, next(problems), at(DAY, 23, 11))
    solve(dave, next(problems), at(DAY, 23, 12))
    with time_machine.travel(at(DAY, 23, 13), tick=False):
        services.days_prepare()
        dated = [board for board in boards.values() if not board.spec.is_all_time]
        assert all(frontier(board) == DAY + 1 for board in dated)
        every_board_is_counted(boards, range(DAY - 7, DAY + 2))
    with time_machine.travel(at(DAY + 1, 0), tick=False):
        every_board_is_counted(boards, range(DAY - 7, DAY + 2))


@pytest.mark.parametrize(
    "newcomer", [{"country": "NP"}, {"country": "BD", "organization": "TU"}], ids=["NP", "TU"]
)
def test_a_fold_while_the_pass_copies_leaves_tomorrow_as_it_was_when_it_began(
    site, bob, charlie, dave, monkeypatch, newcomer
):
    """Tomorrow's orders start as copies of today's as they were when it was begun. A batch
    that folds today's orders while the pass is copying them must not leave the pass a copy of
    what the fold made: here a newcomer from a country, or an organization, nobody on the boards
    was from (no organization at all: an empty ranklist) reports a solve of six days ago, which
    puts her on today's week and not on tomorrow's."""
    boards, problems = site
    solve(bob, next(problems), at(DAY, 8))
    solve(charlie, next(problems), at(DAY - 1, 20))
    solve(dave, next(problems), at(DAY, 23, 10))  # begins tomorrow
    nima = services.programmer_create(user=None, handle="nima", **newcomer)
    real_copy, solved = day_copies.orders_copy, []

    def a_fold_first(board_slug, day):
        if board_slug == "last-7-days" and not solved:
            solved.append(1)
            monkeypatch.setattr(journals, "JOURNAL_MAX", 0)  # her batch folds
            solve(nima, next(problems), at(DAY - 6, 9), at(DAY, 23, 11))
        return real_copy(board_slug, day)

    with (
        mock.patch.object(day_copies, "orders_copy", a_fold_first),
        time_machine.travel(at(DAY, 23, 12), tick=False),
    ):
        services.days_prepare()
    assert solved
    dated = [board for board in boards.values() if not board.spec.is_all_time]
    assert all(frontier(board) == DAY + 1 for board in dated)
    scopes = ["", *nima.group_scopes(), "country:BD"]
    with time_machine.travel(at(DAY, 23, 30), tick=False):
        every_group_is_counted(boards, range(DAY, DAY + 2), scopes)
    with time_machine.travel(at(DAY + 1, 0, 1), tick=False):
        every_group_is_counted(boards, range(DAY, DAY + 2), scopes)


def test_a_fold_before_the_pass_copies_only_the_orders_it_moves(evening, dave, monkeypatch):
    """A busy board's journal can fill between tomorrow's beginning and its pass: the fold then
    copies, under the lease, what it is about to change (the ranklists, and the orders its
    moves are in), not every group's order of the board. The pass copies the rest."""
    boards, problems = evening
    week = boards["last-7-days"]
    problem = next(problems)
    for n in range(6):
        member = services.programmer_create(
            user=None, handle=f"org{n}", country="IN", organization=f"Org {n}"
        )
        solve(member, problem, at(DAY - 2, 10))
    solve(dave, next(problems), at(DAY, 23, 10))  # begins tomorrow
    monkeypatch.setattr(journals, "JOURNAL_MAX", 0)  # the next batch folds
    solve(Programmer.objects.get(handle="org0"), next(problems), at(DAY, 23, 11))

    def copied() -> set[str]:
        found = orders.orders().find({"_id": {"$regex": f"^{week.slug}\\|{DAY + 1}\\|"}})
        return {orders.order_parts(root["_id"])[2] for root in found}

    ranklists = {"groups:country", "groups:org"}
    # Dave's moves and org0's: not the five other organizations, nor those of the evening.
    assert copied() == {"", "country:BD", "country:IN", "org:Org 0"} | ranklists
    with time_machine.travel(at(DAY, 23, 12), tick=False):
        services.days_prepare()
    assert {f"org:Org {n}" for n in range(6)} <= copied()
    scopes = ["", "country:IN", "org:Org 0", "org:Org 3"]
    with time_machine.travel(at(DAY + 1, 0, 1), tick=False):
        every_group_is_counted(boards, range(DAY, DAY + 2), scopes)


def test_a_day_begun_and_never_passed_is_made_at_its_first_solve_after_midnight(evening, alice):
    """No prepare task ran: the first batch after midnight does the pass itself, then finishes."""
    boards, problems = evening
    solve(alice, next(problems), at(DAY, 23, 30))  # begins tomorrow
    solve(alice, next(problems), at(DAY + 1, 0, 0, 5))
    with time_machine.travel(at(DAY + 1, 0, 1), tick=False):
        every_board_is_counted(boards, range(DAY - 7, DAY + 2))


def test_a_late_solve_for_yesterday_after_midnight_changes_both_days(evening, bob):
    boards, problems = evening
    solve(bob, next(problems), at(DAY, 23, 50), reported_at=at(DAY + 1, 0, 10))
    with time_machine.travel(at(DAY + 1, 0, 20), tick=False):
        assert ("bob", 2) in [
            (handle, score) for _, handle, score in listed(boards["last-7-days"], DAY)
        ]
        every_board_is_counted(boards, range(DAY - 7, DAY + 2))


def test_a_month_board_starts_empty_on_the_first_and_keeps_januarys_final_board(evening, dave):
    boards, problems = evening
    month = boards["this-month"]
    solve(dave, next(problems), at(DAY + 1, 23, 59))  # the 31st, the month's last minute
    solve(dave, next(problems), at(DAY + 2, 0, 0, 1))  # February's first second
    with time_machine.travel(at(DAY + 2, 12), tick=False):
        assert [handle for _, handle, _ in listed(month, DAY + 2)] == ["dave"]
        assert listed(month, DAY + 2)[0][2] == 1
        january = listed(month, DAY + 1)
        assert [handle for _, handle, _ in january][:1] == ["charlie"]
        every_board_is_counted(boards, range(DAY - 7, DAY + 3))


@pytest.mark.parametrize("dies_at", [1, 2, 3])
def test_a_preparation_stopped_midway_is_carried_on_by_the_next_holder(
    evening, monkeypatch, dave, dies_at
):
    """The day's pass moves an order a step (the groups' ranklists first, then everybody's and
    each group's order); the preparation dies before its `dies_at`-th step of a board. The next
    solve finds it under way, carries it on (skipping the orders already moved, moving nobody
    twice), and only then moves its own programmer."""
    boards, problems = evening
    monkeypatch.setattr(day_change, "MOVES_A_STEP", 1)
    real, steps = order_writes.manifests_move, defaultdict(int)

    def dies_midway(folding, frontiers):
        board_slug = next(iter(frontiers))
        steps[board_slug] += any(f"|{DAY + 1}|" in order for order in folding)  # not a fold
        if steps[board_slug] == dies_at:
            raise RuntimeError("the worker was killed")
        return real(folding, frontiers)

    with mock.patch.object(order_writes, "manifests_move", dies_midway):
        with pytest.raises(RuntimeError, match="killed"):
            solve(dave, next(problems), at(DAY + 1, 0, 5))
    dated = [board for board in boards.values() if not board.spec.is_all_time]
    under_way = [journals.journal_read(board.slug).get("prep", {}).get("day") for board in dated]
    assert DAY + 1 in under_way
    solve(dave, next(problems), at(DAY + 1, 0, 6))
    with time_machine.travel(at(DAY + 1, 0, 7), tick=False):
        assert all(frontier(board) == DAY + 1 for board in dated)
        every_board_is_counted(boards, range(DAY - 7, DAY + 2))


def test_a_day_with_many_groups_is_prepared_in_reads_of_a_few_ids(
    evening, monkeypatch, settings, mongo_commands
):
    """The preparation names every group of the day before and reads every entry it moves: each
    `$in` names at most the few ids the embedded server can afford (it compares every document
    found with every id named), however many groups and programmers the day holds; a dozen
    organizations here, read four at a time."""
    boards, problems = evening
    settings.MONGODB_IDS_PER_READ = 4
    monkeypatch.setattr(orders, "IN_MAX", 4)
    monkeypatch.setattr(orders, "GROUP_NAMES_PER_READ", 4)
    problem = next(problems)
    for n in range(12):
        member = services.programmer_create(
            user=None, handle=f"org{n:02}", country="BD", organization=f"Org {n}"
        )
        solve(member, problem, at(DAY - 6, 10))  # off the week at midnight: each one moves
    mongo_commands.clear()
    with time_machine.travel(at(DAY + 1, 0, 1), tick=False):
        services.solves_repair()  # the repair task prepares the day
        dated = [board for board in boards.values() if not board.spec.is_all_time]
        assert all(frontier(board) == DAY + 1 for board in dated)
        named = [len(ids) for command in mongo_commands.commands for ids in in_lists(command)]
        assert named and max(named) <= 4, named
        every_board_is_counted(boards, range(DAY - 1, DAY + 2))


@pytest.fixture
def tiny_structures(monkeypatch):
    """Sets of two, every member written into its set, and a fold at every batch: today's
    folds split and replace the documents tomorrow's copies share."""
    monkeypatch.setattr(sets, "SET_MAX", 2)
    monkeypatch.setattr(sets, "SET_FILL", 2)
    monkeypatch.setattr(sets, "ARRIVALS_MAX", 0)
    monkeypatch.setattr(orders, "INLINE_MAX", 0)
    monkeypatch.setattr(journals, "JOURNAL_MAX", 0)
    monkeypatch.setattr(day_change, "MOVES_A_STEP", 1)


@pytest.mark.parametrize("seed", range(4))
def test_tomorrow_made_while_random_solves_go_on_is_the_logs_count(site, tiny_structures, seed):
    """Random programmers in two countries and organizations solve on random days of the past
    week; in the last hour, random solves (some late, for earlier days; some by newcomers) come
    before the day is begun, between its beginning and its pass, during the pass (between its
    steps) and after it. Tomorrow and today are, at every look, the log's count."""
    boards, problems = site
    rng = random.Random(seed)
    problems = [next(problems) for _ in range(8)]
    people = [
        services.programmer_create(
            user=None,
            handle=f"p{n}",
            country=rng.choice(["BD", "IN"]),
            organization=rng.choice(["", "BUET", "IIT"]),
        )
        for n in range(10)
    ]
    solved: set[tuple[int, int]] = set()

    def a_solve(when, reported=None):
        programmer, problem = rng.choice(people), rng.randrange(len(problems))
        if (programmer.pk, problem) not in solved:
            solved.add((programmer.pk, problem))
            solve(programmer, problems[problem], when, reported)

    history = [at(DAY - rng.randrange(7), rng.randrange(23), rng.randrange(60)) for _ in range(14)]
    for when in sorted(history):
        a_solve(when)
    minute = iter(range(5, 60, 2))

    def last_hour_solves(count):
        for _ in range(count):
            now = at(DAY, 23, next(minute))
            late = rng.random() < 0.3
            a_solve(now - dt.timedelta(days=rng.randrange(1, 3)) if late else now, now)

    last_hour_solves(2)  # the first begins tomorrow
    last_hour_solves(3)
    real_move, real_pass, steps, passing = order_writes.manifests_move, day_change.day_pass, [], []

    def solves_between_steps(folding, frontiers):
        if passing == [1] and any(f"|{DAY + 1}|" in order for order in folding):
            steps.append(1)
            if len(steps) % 3 == 0:
                passing.append(1)  # not again in the solve's own batch
                last_hour_solves(1)
                passing.pop()
        return real_move(folding, frontiers)

    def a_pass(*args):
        passing.append(1)
        real_pass(*args)
        passing.clear()

    with (
        mock.patch.object(order_writes, "manifests_move", solves_between_steps),
        mock.patch.object(day_change, "day_pass", a_pass),
        time_machine.travel(at(DAY, 23, 30), tick=False),
    ):
        services.days_prepare()
    last_hour_solves(2)
    dated = [board for board in boards.values() if not board.spec.is_all_time]
    assert steps and all(frontier(board) == DAY + 1 for board in dated)
    with time_machine.travel(at(DAY, 23, 59, 59), tick=False):
        every_board_is_counted(boards, range(DAY - 3, DAY + 2))
    with time_machine.travel(at(DAY + 1, 0, 0, 0), tick=False):
        every_board_is_counted(boards, range(DAY - 3, DAY + 2))


@pytest.mark.parametrize("caught_at", ["orders_write", "_sets_write", "manifests_swap"])
def test_a_preparer_that_outlived_its_lease_changes_nothing_another_made(
    evening, alice, dave, tiny_structures, caught_at, monkeypatch
):
    """A pass stalls just before it writes (a ranklist it copies, the sets it moves, or its
    roots), past its preparer's lease: meanwhile another run of the task does every pass, a
    batch finishes the day, and solves move on tomorrow's orders. Then the stalled pass writes:
    what it wrote first meets a version gone (or a document there already), and it stops; every
    board is the log's count."""
    if caught_at == "orders_write":  # no fold before the pass, which copies tomorrow itself
        monkeypatch.setattr(journals, "JOURNAL_MAX", 1024)
    boards, problems = evening
    solve(dave, next(problems), at(DAY, 23, 10))  # begins tomorrow
    solve(alice, next(problems), at(DAY, 23, 11))
    real, real_pass = getattr(order_writes, caught_at), day_change.day_pass
    stalled, passing = [], []

    def stalls_once(*args):
        if passing and not stalled:
            stalled.append(passing[-1])
            lease.appliers().update_many({}, {"$set": {"until": 0}})  # its lease ran out
            assert services.days_prepare() > 0  # another run does the passes and finishes
            solve(alice, next(problems), at(DAY, 23, 13))
            solve(dave, next(problems), at(DAY, 23, 14))
        return real(*args)

    def a_pass(board_slug, *args):
        passing.append(board_slug)
        real_pass(board_slug, *args)

    with (
        mock.patch.object(order_writes, caught_at, stalls_once),
        mock.patch.object(day_change, "day_pass", a_pass),
        time_machine.travel(at(DAY, 23, 12), tick=False),
    ):
        windows = {board.slug: board.spec for board in boards.values()}
        passed = leaderboard.days_pass(windows)
    assert stalled and stalled[0] not in passed  # stopped at its write
    with time_machine.travel(at(DAY, 23, 59), tick=False):
        every_board_is_counted(boards, range(DAY - 7, DAY + 2))
    with time_machine.travel(at(DAY + 1, 0), tick=False):
        every_board_is_counted(boards, range(DAY - 7, DAY + 2))

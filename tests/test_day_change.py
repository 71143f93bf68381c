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
from pymongo.errors import ConnectionFailure

from solutions import clock, leaderboard, mongo, selectors, services
from solutions.leaderboard import (
    applier,
    day_change,
    day_copies,
    day_moves,
    groups,
    journals,
    lease,
    order_writes,
    orders,
    sets,
)
from solutions.models import Board, Problem, Programmer
from tests.support.ranklists import brute_ranklist
from tests.support.ranklists import listed as ranklist_listed

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


def every_ranklist_is_counted(client, boards: dict[str, Board], days: range) -> None:
    """Each kind of group's ranklist of every board day, through the API, is the log's count."""
    for board in boards.values():
        for day in [days[-1]] if board.spec.is_all_time else days:
            for kind in groups.KINDS:
                shown = ranklist_listed(client, board, day, kind, page_size=10)
                assert shown == brute_ranklist(board, day, kind, TZ), (board.slug, day, kind)


def counted_before_and_after_midnight(boards, scopes: tuple[str, ...] = (), client=None) -> None:
    """Every board day of the last week and tomorrow is the log's count a second before midnight
    and at midnight, in each group of `scopes` too; given a client, the ranklists of today and
    tomorrow, read at midnight through the API (which serves no day ahead of today)."""
    for moment in (at(DAY, 23, 59, 59), at(DAY + 1, 0)):
        with time_machine.travel(moment, tick=False):
            every_board_is_counted(boards, range(DAY - 7, DAY + 2))
            every_group_is_counted(boards, range(DAY, DAY + 2), list(scopes))
    if client is not None:
        with time_machine.travel(at(DAY + 1, 0), tick=False):
            every_ranklist_is_counted(client, boards, range(DAY, DAY + 2))


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


def a_solve_in_each_round(board: Board, solvers: list[tuple[Programmer, Problem]]):
    """A `manifests_move` that, the first time a round of `board`'s pass writes tomorrow's
    orders, has the next of these programmers solve (their batch runs in the middle of the
    round); and the rounds it saw."""
    real, seen, busy = order_writes.manifests_move, [], []

    def a_solve_in_the_round(folding, frontiers):
        prep = journals.journal_read(board.slug).get("prep") or {}
        tomorrow = any(f"|{DAY + 1}|" in order for order in folding)
        if board.slug in frontiers and tomorrow and not busy and prep["id"] not in seen:
            seen.append(prep["id"])
            if len(seen) <= len(solvers):
                busy.append(1)
                programmer, problem = solvers[len(seen) - 1]
                solve(programmer, problem, at(DAY, 23, 30 + len(seen)))
                busy.pop()
        return real(folding, frontiers)

    return a_solve_in_the_round, seen


@pytest.mark.parametrize("again", [False, True], ids=["once", "again"])
def test_the_pass_goes_on_in_rounds_and_leaves_the_finish_the_last_rounds_solvers(
    evening, alice, bob, charlie, dave, monkeypatch, client, again
):
    """Solves go on during tomorrow's pass: while its batches moved anybody during a round, the
    pass goes on with another (at most PASS_ROUNDS), which moves them in tomorrow's orders off
    the lease; the finish, under the lease, moves only those of the last round (here Charlie).
    `again`: each round's solver solves once more just as the next round begins, before it
    reads what to move (so their entry keeps what the orders held at both). Every board day
    and every group is the log's count before midnight and after."""
    monkeypatch.setattr(day_change, "FINISH_PROGRAMMERS", 0)
    boards, problems = evening
    week = boards["last-7-days"]
    solve(dave, next(problems), at(DAY, 23, 10))  # begins tomorrow
    solvers = [(who, next(problems)) for who in (alice, bob, dave, charlie)]
    in_each_round, rounds = a_solve_in_each_round(week, solvers)
    real_round = day_change._round_begin

    def a_round_and_a_solve_again(board_slug, prep):
        begun = real_round(board_slug, prep)
        if again and board_slug == week.slug:
            who = solvers[begun["round"] - 2][0]  # who solved during the round before
            solve(who, next(problems), at(DAY, 23, 40 + begun["round"]))
        return begun

    monkeypatch.setattr(day_change, "_round_begin", a_round_and_a_solve_again)
    left, real_finish = {}, day_change.day_finish

    def day_finish(board_slug, day):
        prep = journals.journal_read(board_slug)["prep"]
        left[board_slug] = (prep.get("round"), day_moves.moved_during(prep["id"]))
        real_finish(board_slug, day)

    with (
        mock.patch.object(order_writes, "manifests_move", in_each_round),
        mock.patch.object(day_change, "day_finish", day_finish),
        time_machine.travel(at(DAY, 23, 30), tick=False),
    ):
        services.days_prepare()
    assert len(rounds) == day_change.PASS_ROUNDS
    last = sorted({charlie.pk, dave.pk}) if again else [charlie.pk]
    assert left[week.slug] == (day_change.PASS_ROUNDS, last)
    dated = [board for board in boards.values() if not board.spec.is_all_time]
    assert all(frontier(board) == DAY + 1 for board in dated)
    counted_before_and_after_midnight(boards, ("country:BD", "country:IN"), client)


def test_a_batch_cut_after_recording_whom_it_moved_is_carried_on_by_the_rounds(
    evening, alice, dave, monkeypatch, client
):
    """During the second round, Alice's batch is cut after it recorded whom it moved (for the
    next round) and before her entry kept what the orders held for her: her solve fails and
    stays pending. Her retry moves her during the third round. That round takes her from what
    the orders held when it began, as her entry kept it then (nobody moved her in between);
    tomorrow is the log's count."""
    monkeypatch.setattr(day_change, "FINISH_PROGRAMMERS", 0)
    boards, problems = evening
    week = boards["last-7-days"]
    solve(dave, next(problems), at(DAY, 23, 10))
    in_each_round, _rounds = a_solve_in_each_round(week, [(dave, next(problems))])
    real_round, real_write, problem, cut = (
        day_change._round_begin,
        applier._batch_write,
        next(problems),
        [],
    )

    def cut_after_the_record(writes):
        if cut == [1]:
            recorded = [n for n, w in enumerate(writes) if w._namespace.endswith(".prep_moved")]
            real_write(writes[: recorded[-1] + 1])
            cut.append(2)
            raise ConnectionFailure("the connection dropped")
        return real_write(writes)

    def a_round_and_alices_solve(board_slug, prep):
        begun = real_round(board_slug, prep)
        if board_slug == week.slug and begun["round"] == 2:
            cut.append(1)
            with pytest.raises(ConnectionFailure):
                solve(alice, problem, at(DAY, 23, 40))
        elif board_slug == week.slug and begun["round"] == 3:
            solve(alice, problem, at(DAY, 23, 40), at(DAY, 23, 41))  # her retry
        return begun

    monkeypatch.setattr(day_change, "_round_begin", a_round_and_alices_solve)
    monkeypatch.setattr(applier, "_batch_write", cut_after_the_record)
    with (
        mock.patch.object(order_writes, "manifests_move", in_each_round),
        time_machine.travel(at(DAY, 23, 30), tick=False),
    ):
        services.days_prepare()
    assert cut == [1, 2]
    counted_before_and_after_midnight(boards, ("country:BD", "org:BUET"), client)


def test_a_fold_stopped_midway_is_finished_when_the_next_round_begins(
    evening, alice, dave, tiny_structures, monkeypatch
):
    """During the pass's first round, Alice's batch folds today's orders and dies midway through
    the fold; the second round begins (a new epoch for the journal) before any batch finishes
    it. Today's boards, read right then, are the log's count, and so is tomorrow."""
    monkeypatch.setattr(day_change, "FINISH_PROGRAMMERS", 0)
    boards, problems = evening
    week = boards["last-7-days"]
    solve(dave, next(problems), at(DAY, 23, 10))
    real_move, real_round, problem, folding = (
        order_writes.manifests_move,
        day_change._round_begin,
        next(problems),
        [],
    )

    def alices_fold_dies(moving, frontiers):
        today = any(f"|{DAY}|" in order for order in moving)
        if folding == [1] and today:
            folding.append(2)
            real_move(dict(list(moving.items())[:1]), frontiers)  # one order folded of several
            raise RuntimeError("the worker was killed")
        if folding or week.slug not in frontiers or not any(f"|{DAY + 1}|" in o for o in moving):
            return real_move(moving, frontiers)
        folding.append(1)
        with pytest.raises(RuntimeError, match="killed"):
            solve(alice, problem, at(DAY, 23, 31))
        assert journals.journal_read(week.slug).get("folding")
        return real_move(moving, frontiers)

    def a_round_read_at_once(board_slug, prep):
        begun = real_round(board_slug, prep)
        with time_machine.travel(at(DAY, 23, 32), tick=False):
            every_board_is_counted(boards, range(DAY - 1, DAY + 1))
        return begun

    monkeypatch.setattr(day_change, "_round_begin", a_round_read_at_once)
    with (
        mock.patch.object(order_writes, "manifests_move", alices_fold_dies),
        time_machine.travel(at(DAY, 23, 30), tick=False),
    ):
        services.days_prepare()
    assert folding == [1, 2]
    counted_before_and_after_midnight(boards)


@pytest.mark.parametrize("dies_in_round", [2, 3])
def test_a_round_stopped_midway_is_carried_on_by_the_next_run(
    evening, alice, bob, dave, tiny_structures, monkeypatch, dies_in_round
):
    """A round of the pass dies between two of its steps: the round stays the journal's, the
    next run of the task carries it on (the orders it moved already are skipped) and goes on
    with the rounds after it; tomorrow is the log's count."""
    monkeypatch.setattr(day_change, "FINISH_PROGRAMMERS", 0)
    boards, problems = evening
    week = boards["last-7-days"]
    solve(dave, next(problems), at(DAY, 23, 10))
    solvers = [(who, next(problems)) for who in (alice, bob, dave)]
    in_each_round, rounds = a_solve_in_each_round(week, solvers)
    steps = []

    def dies_midway(folding, frontiers):
        if week.slug in frontiers and any(f"|{DAY + 1}|" in order for order in folding):
            steps.append(len(rounds))
            if steps.count(dies_in_round) == 2:
                raise RuntimeError("the worker was killed")
        return in_each_round(folding, frontiers)

    with (
        mock.patch.object(order_writes, "manifests_move", dies_midway),
        time_machine.travel(at(DAY, 23, 30), tick=False),
    ):
        with pytest.raises(RuntimeError, match="killed"):
            services.days_prepare()
        stopped = journals.journal_read(week.slug)["prep"]
        assert stopped["round"] == dies_in_round
        lease.appliers().update_many({}, {"$set": {"until": 0}})  # the dead run's leases
        services.days_prepare()
    dated = [board for board in boards.values() if not board.spec.is_all_time]
    assert all(frontier(board) == DAY + 1 for board in dated)
    counted_before_and_after_midnight(boards)


@pytest.mark.parametrize("dies_at", [1, 2, 3])
def test_a_preparation_stopped_midway_is_carried_on_by_the_next_holder(
    evening, monkeypatch, dave, dies_at
):
    """The day's pass moves an order a step (the groups' ranklists first, then everybody's and
    each group's order); the preparation dies before its `dies_at`-th step of a board. The next
    solve finds it under way, carries it on (skipping the orders already moved, moving nobody
    twice), and only then moves its own programmer."""
    boards, problems = evening
    monkeypatch.setattr(day_moves, "MOVES_A_STEP", 1)
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
    monkeypatch.setattr(day_moves, "MOVES_A_STEP", 1)


@pytest.mark.parametrize("rounds", [False, True], ids=["one-round", "rounds"])
@pytest.mark.parametrize("seed", range(4))
def test_tomorrow_made_while_random_solves_go_on_is_the_logs_count(
    site, tiny_structures, monkeypatch, seed, rounds
):
    """Random programmers in two countries and organizations solve on random days of the past
    week; in the last hour, random solves (some late, for earlier days; some by newcomers) come
    before the day is begun, between its beginning and its pass, during the pass (between its
    steps, in its rounds: while anybody moved during a round) and after it. Tomorrow and today
    are, at every look, the log's count."""
    monkeypatch.setattr(day_change, "FINISH_PROGRAMMERS", 0 if rounds else 10**6)
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

    real_round, begun = day_change._round_begin, []

    def a_round(*args):
        begun.append(1)
        return real_round(*args)

    with (
        mock.patch.object(order_writes, "manifests_move", solves_between_steps),
        mock.patch.object(day_change, "day_pass", a_pass),
        mock.patch.object(day_change, "_round_begin", a_round),
        time_machine.travel(at(DAY, 23, 30), tick=False),
    ):
        services.days_prepare()
    last_hour_solves(2)
    dated = [board for board in boards.values() if not board.spec.is_all_time]
    assert steps and all(frontier(board) == DAY + 1 for board in dated)
    assert bool(begun) == rounds
    with time_machine.travel(at(DAY, 23, 59, 59), tick=False):
        every_board_is_counted(boards, range(DAY - 3, DAY + 2))
    with time_machine.travel(at(DAY + 1, 0, 0, 0), tick=False):
        every_board_is_counted(boards, range(DAY - 3, DAY + 2))


@pytest.mark.parametrize(
    "caught_at, in_round",
    [
        ("orders_write", 1),
        ("_sets_write", 1),
        ("manifests_swap", 1),
        ("_sets_write", 2),
        ("manifests_swap", 2),
    ],
)
def test_a_preparer_that_outlived_its_lease_changes_nothing_another_made(
    evening, alice, dave, tiny_structures, caught_at, in_round, monkeypatch
):
    """A pass stalls just before it writes (a ranklist it copies, the sets it moves, or its
    roots), in its first round or in the second (which moves those who solved during the
    first), past its preparer's lease: meanwhile another run of the task does every pass, a
    batch finishes the day, and solves move on tomorrow's orders. Then the stalled pass writes:
    what it wrote first meets a version gone (or a document there already), and it stops; every
    board is the log's count."""
    if caught_at == "orders_write":  # no fold before the pass, which copies tomorrow itself
        monkeypatch.setattr(journals, "JOURNAL_MAX", 1024)
    if in_round > 1:  # a round for whoever moved during the one before
        monkeypatch.setattr(day_change, "FINISH_PROGRAMMERS", 0)
    boards, problems = evening
    solve(dave, next(problems), at(DAY, 23, 10))  # begins tomorrow
    solve(alice, next(problems), at(DAY, 23, 11))
    real, real_pass = getattr(order_writes, caught_at), day_change.day_pass
    stalled, passing = [], []

    def round_of(board_slug: str) -> int:
        return journals.journal_read(board_slug)["prep"].get("round", 1)

    def stalls_once(*args):
        if passing and not stalled and round_of(passing[-1]) == in_round:
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

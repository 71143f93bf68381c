"""ICPC standings maths (no I/O): penalty arithmetic, ordering, shared ranks, first solvers."""

import datetime as dt

from competitions.standings import Attempt, Cell, standings

START = dt.datetime(2020, 1, 19, 9, 0, tzinfo=dt.UTC)
PROBLEMS = ["a", "b", "c"]
ALICE, BOB, CHARLIE, DAVE = 1, 2, 3, 4
HANDLES = {ALICE: "Alice", BOB: "bob", CHARLIE: "charlie", DAVE: "dave"}


def at(minute: float) -> dt.datetime:
    return START + dt.timedelta(minutes=minute)


def right(pid: int, problem: str, minute: float) -> Attempt:
    return Attempt(programmer_id=pid, problem=problem, accepted=True, at=at(minute))


def wrong(pid: int, problem: str, minute: float) -> Attempt:
    return Attempt(programmer_id=pid, problem=problem, accepted=False, at=at(minute))


def table(attempts, handles=HANDLES):
    return standings(attempts, start=START, problems=PROBLEMS, handles=handles)


def by_handle(rows):
    return {row.handle: row for row in rows}


def test_penalty_is_the_solve_minutes_plus_twenty_per_wrong_answer_before():
    rows = table(
        [
            wrong(ALICE, "a", 5),
            wrong(ALICE, "a", 10),
            right(ALICE, "a", 47.9),  # minute 47: minutes are rounded down
            right(ALICE, "b", 61),
            wrong(ALICE, "b", 70),  # after the accepted answer: ignored
            wrong(ALICE, "c", 80),  # unsolved: costs nothing
        ]
    )
    alice = by_handle(rows)["Alice"]
    assert (alice.solved, alice.penalty) == (2, 47 + 2 * 20 + 61)
    assert (alice.cells["a"].attempts, alice.cells["a"].solved_minute) == (3, 47)
    assert (alice.cells["b"].attempts, alice.cells["b"].solved_minute) == (1, 61)
    assert (alice.cells["c"].attempts, alice.cells["c"].solved_minute) == (1, None)


def test_attempts_count_in_time_order_whatever_order_they_arrive_in():
    rows = table([right(ALICE, "a", 30), wrong(ALICE, "a", 10)])
    assert by_handle(rows)["Alice"].penalty == 30 + 20


def test_more_solved_beats_less_penalty_and_less_penalty_beats_more():
    rows = table(
        [
            right(ALICE, "a", 100),
            right(ALICE, "b", 110),  # 2 solved, penalty 210
            right(BOB, "a", 5),  # 1 solved, penalty 5
            right(CHARLIE, "a", 50),
            right(CHARLIE, "b", 60),  # 2 solved, penalty 110
        ]
    )
    assert [(r.rank, r.handle, r.solved, r.penalty) for r in rows] == [
        (1, "charlie", 2, 110),
        (2, "Alice", 2, 210),
        (3, "bob", 1, 5),
        (4, "dave", 0, 0),
    ]


def test_equal_penalty_is_broken_by_the_earlier_last_accepted_answer():
    rows = table(
        [
            right(ALICE, "a", 10),
            right(ALICE, "b", 50),  # penalty 60, last at 50
            right(BOB, "a", 20),
            right(BOB, "b", 40),  # penalty 60, last at 40
        ]
    )
    assert [(r.rank, r.handle) for r in rows[:2]] == [(1, "bob"), (2, "Alice")]


def test_equal_on_all_three_share_a_rank_and_the_next_rank_skips():
    rows = table(
        [
            right(ALICE, "a", 30),
            right(BOB, "a", 30.5),  # the same minute
            right(CHARLIE, "a", 10),
            right(CHARLIE, "b", 20),
        ]
    )
    assert [(r.rank, r.handle) for r in rows] == [
        (1, "charlie"),
        (2, "Alice"),
        (2, "bob"),
        (4, "dave"),
    ]


def test_the_first_solver_of_each_problem_is_marked():
    rows = by_handle(table([right(ALICE, "a", 30.5), right(BOB, "a", 30.2), right(ALICE, "b", 3)]))
    assert rows["bob"].cells["a"].first is True
    assert rows["Alice"].cells["a"].first is False
    assert rows["Alice"].cells["b"].first is True


def test_leaving_a_programmer_out_closes_the_ranks_up_and_moves_the_first_mark():
    attempts = [right(ALICE, "a", 10), right(BOB, "a", 20), right(CHARLIE, "a", 30)]
    without_alice = {pid: h for pid, h in HANDLES.items() if pid != ALICE}
    rows = table(attempts, handles=without_alice)
    assert [(r.rank, r.handle) for r in rows] == [(1, "bob"), (2, "charlie"), (3, "dave")]
    assert rows[0].cells["a"].first is True


def test_attempts_on_problems_outside_the_competition_do_not_count():
    rows = table([right(ALICE, "zzz", 10)])
    assert by_handle(rows)["Alice"].solved == 0


def test_attempts_held_back_by_a_freeze_show_as_pending_tries_and_change_no_rank():
    shown = [right(ALICE, "a", 30), wrong(BOB, "a", 40)]
    held_back = [wrong(BOB, "a", 130), right(BOB, "a", 140), right(ALICE, "a", 150)]
    held_back.append(right(CHARLIE, "b", 135))
    rows = standings(shown, start=START, problems=PROBLEMS, handles=HANDLES, held_back=held_back)
    people = by_handle(rows)
    assert [(row.rank, row.handle) for row in rows][:2] == [(1, "Alice"), (2, "bob")]
    assert (people["bob"].cells["a"].attempts, people["bob"].cells["a"].pending) == (1, 2)
    assert people["bob"].cells["a"].tries == 3
    assert people["charlie"].cells["b"].pending == 1 and people["charlie"].solved == 0
    # A problem solved before the freeze stays solved: later answers cannot change it.
    assert people["Alice"].cells["a"].pending == 0


def test_archived_cells_without_a_pending_count_still_load():
    archived = {"attempts": 2, "solved_minute": 30, "solved_seconds": 1800.0, "first": True}
    cell = Cell.from_dict(archived)
    assert (cell.pending, cell.solved, cell.first) == (0, True, True)
    assert Cell.from_dict(cell.to_dict()) == cell

"""Solves and score reports stopped at any write: the storage goes away before or after a
random write command of a solve or of a scored report on the best-score boards (the log, the
entry, the journals, a fold's sets, nodes and roots, the records of what the orders hold, the
lease), the way a killed worker or a killed server leaves it. Later solves and reports and the
repair task carry on; then every order holds every entry once, as a brute-force reading of the
entries says, and every board, best-score boards included, is what a rebuild from the logs
(`solves` and `scores`) makes of it: the same entries, and the same pages of every day."""

from __future__ import annotations

import datetime as dt
import os
import random
from collections import Counter

import pytest
import time_machine
from pymongo.errors import AutoReconnect

from solutions import clock, mongo, selectors, services
from solutions.leaderboard import ALL_TIME, ROLLING, day_change, entries, journals, lease
from solutions.models import Board, Problem
from tests.conftest import NOW, lease_run_out, make_programmer
from tests.support.engine import orders_hold_the_entries
from tests.support.faults import WRITES, commands_wrapped, small_orders

SEEDS = int(os.environ.get("CRASH_SEEDS", "8"))  # more for a long hunt: CRASH_SEEDS=200


class StorageLost:
    """Count write commands; the storage goes away at the `at`-th one, before the server gets it
    or right after it did it (the answer lost). A command of writes to several collections
    stops after a random number of them (`done`: a server killed in its middle)."""

    def __init__(self, at: int, after: bool, done: random.Random) -> None:
        self.at, self.after, self.count, self.done = at, after, 0, done

    def armed(self):
        return commands_wrapped(
            WRITES, lambda _name, real: self._wrapped(real), together=self._together
        )

    def _together(self, real):
        lost = self

        def write(client, models, *args, **kwargs):
            lost.count += 1
            if lost.count != lost.at:
                return real(client, models, *args, **kwargs)
            done = models[: lost.done.randrange(len(models) + 1)]
            if lost.after and done:
                real(client, done, *args, **kwargs)
            raise AutoReconnect("connection to the server was lost")

        return write

    def _wrapped(self, real):
        lost = self

        def write(collection, *args, **kwargs):
            lost.count += 1
            if lost.count != lost.at:
                return real(collection, *args, **kwargs)
            if lost.after:
                real(collection, *args, **kwargs)
            raise AutoReconnect("connection to the server was lost")

        return write


def best_score_boards() -> list[Board]:
    """Two best-score boards beside the seeded boards of solves: the last 3 days, higher is
    better, and all time, lower is better (a time under a limit)."""
    made = [
        Board.objects.create(
            slug="best-3", title="Best 3", metric=Board.BEST, window=ROLLING, window_days=3
        ),
        Board.objects.create(
            slug="fastest",
            title="Fastest",
            metric=Board.BEST,
            window=ALL_TIME,
            lower_is_better=True,
            score_limit=100,
        ),
    ]
    mongo.ensure_indexes([board.slug for board in made])
    return made


def board_days(board: Board, today: int) -> list[tuple]:
    """Every page a reader can see of a board, day by day (today alone for an all-time board):
    (day, rank, handle, score) of each row."""
    days = [today] if board.spec.is_all_time else range(today - 4, today + 1)
    return [
        (day, row.rank, row.handle, row.score)
        for day in days
        for row in selectors.board_page(board=board, day=day, page_size=100).rows
    ]


def every_board_is_a_rebuild_from_the_log(boards: list[Board], today: int) -> None:
    """Each board's entries are those a rebuild computes from the `solves` and `scores` logs:
    nothing to rewrite, and nothing to remove but entries on no day (a programmer whose solves
    all left a board's window keeps an entry of zeros until a rebuild); once rebuilt, every day
    of every board reads the same."""
    before = {board.slug: board_days(board, today) for board in boards}
    assert any(before.values())
    stored = {board.slug: list(entries.entries(board.slug).find()) for board in boards}
    for board in boards:
        report = services.board_rebuild(board=board, dry_run=True)
        assert report.changed == 0, (board.slug, report.changed_ids)
    services.boards_rebuild(boards=boards)
    for board in boards:
        kept = {entry["_id"] for entry in entries.entries(board.slug).find()}
        gone = [entry for entry in stored[board.slug] if entry["_id"] not in kept]
        assert not [entry for entry in gone if any(entry.get("keys", {}).values())], board.slug
    assert {board.slug: board_days(board, today) for board in boards} == before


@pytest.mark.parametrize("seed", range(SEEDS))
def test_solves_and_reports_stopped_at_any_write_leave_every_board_as_the_log_rebuilds_it(
    mongodb, now, boards, monkeypatch, seed
):
    chance = random.Random(seed)
    small_orders(monkeypatch, chance)
    best = best_score_boards()
    people = [make_programmer(f"p{n:02d}") for n in range(10)]
    problems = [Problem.objects.create(slug=f"c{i}", title=f"C{i}", answer="1") for i in range(6)]
    scored = [Problem.objects.create(slug=f"h{i}", title=f"H{i}", scored=True) for i in range(3)]
    stopped = Counter()  # of each kind, those the storage stopped
    for _write in range(40):
        programmer = chance.choice(people)
        solved_at = NOW - dt.timedelta(days=chance.randrange(4), minutes=chance.randrange(600))
        kind = "report" if chance.random() < 0.35 else "solve"  # a game server's, a judge's
        # A report sends fewer write commands than a solve: drawn from fewer, so it is stopped too.
        at = chance.randrange(1, 12 if kind == "report" else 30)
        lost = StorageLost(at=at, after=chance.random() < 0.5, done=chance)
        try:
            with lost.armed():
                if kind == "report":
                    services.score_record(
                        programmer=programmer,
                        problem=chance.choice(scored),
                        solved_at=solved_at,
                        score=chance.randrange(1, 100),
                    )
                else:
                    services.solve_record(
                        programmer=programmer, problem=chance.choice(problems), solved_at=solved_at
                    )
        except AutoReconnect:
            stopped[kind] += 1
            # A killed worker's lease runs out before anybody else can take it.
            lease_run_out()
    assert stopped["report"] and stopped["solve"]  # the faults happened, to both kinds
    now.shift(dt.timedelta(minutes=5))
    services.solves_repair()
    today = clock.today()
    every = [*boards.values(), *best]
    for board in every:
        orders_hold_the_entries(board, range(today - 4, today + board.spec.span))
    every_board_is_a_rebuild_from_the_log(every, today)


def last_hour_solve_or_task(kind, chance, people, problems, minute) -> None:
    """One thing of the last hour of the day: a solve (now, or late for the day before) or a
    run of the prepare task."""
    now = LAST_HOUR + dt.timedelta(minutes=minute)
    with time_machine.travel(now, tick=False):
        if kind == "task":
            services.days_prepare()
            return
        late = dt.timedelta(days=chance.randrange(2)) if chance.random() < 0.3 else dt.timedelta()
        services.solve_record(
            programmer=chance.choice(people), problem=chance.choice(problems), solved_at=now - late
        )


LAST_HOUR = NOW.replace(hour=23, minute=0, second=0)  # the tests' time zone is UTC


@pytest.mark.parametrize("seed", range(SEEDS))
def test_tomorrow_made_through_writes_lost_anywhere_is_what_the_entries_say(
    mongodb, boards, monkeypatch, seed
):
    """The last hour of a day, with tomorrow made while the solves go on: solves and runs of the
    prepare task (which begins tomorrow, does its passes off the lease and finishes them) stopped
    at any write. Then every order up to tomorrow holds every entry once, and every board is
    what a rebuild from the log makes of it, before midnight and after. With an odd seed, the
    pass goes on in rounds while anybody moved during the last (a pass stopped midway leaves the
    next run of the task the solves made meanwhile)."""
    chance = random.Random(seed)
    small_orders(monkeypatch, chance)
    monkeypatch.setattr(day_change, "FINISH_PROGRAMMERS", 0 if seed % 2 else 200)
    people = [make_programmer(f"p{n:02d}") for n in range(10)]
    problems = [Problem.objects.create(slug=f"c{i}", title=f"C{i}", answer="1") for i in range(8)]
    for n in range(12):  # the days before, that tonight's change moves people out of
        when = NOW - dt.timedelta(days=7 - n // 2)
        with time_machine.travel(when, tick=False):
            services.solve_record(
                programmer=chance.choice(people), problem=chance.choice(problems), solved_at=when
            )
    stopped = Counter()
    for minute in range(1, 50):
        kind = "task" if chance.random() < 0.3 else "solve"
        lost = StorageLost(at=chance.randrange(1, 30), after=chance.random() < 0.5, done=chance)
        try:
            with lost.armed():
                last_hour_solve_or_task(kind, chance, people, problems, minute)
        except AutoReconnect:
            stopped[kind] += 1
            lease.appliers().update_many({}, {"$set": {"until": 0}})  # every lease runs out
    assert stopped["solve"] and stopped["task"]
    with time_machine.travel(LAST_HOUR + dt.timedelta(minutes=55), tick=False):
        services.solves_repair()
        services.days_prepare()
        tonight = clock.today()
        for board in boards.values():
            assert journals.journal_heads([board.slug])[board.slug].frontier in (None, tonight + 1)
            orders_hold_the_entries(board, range(tonight - 4, tonight + 2))
        every_board_is_a_rebuild_from_the_log(list(boards.values()), tonight)
    with time_machine.travel(LAST_HOUR + dt.timedelta(hours=1), tick=False):
        every_board_is_a_rebuild_from_the_log(list(boards.values()), tonight + 1)

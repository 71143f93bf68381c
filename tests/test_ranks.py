"""Every rank the product shows equals the rank counted by brute force from the solves log.

Random data (seeded): a few hundred programmers, solves over ten days, whole-hour times so that
equal sort keys happen and the handle breaks them. Most solves are loaded through a rebuild, the
rest arrive one by one (late ones too) through the incremental path, so both ways of keeping the
rank data are checked. Boards: rolling with shared ranks, rolling with unique ranks, a calendar
week, and all-time by points; a group's view too.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict

import pytest
import time_machine

from solutions import leaderboard, mongo, selectors, services
from solutions.leaderboard import journals, orders, sets
from solutions.models import Board, Problem, Programmer
from tests.conftest import NOW

TODAY = leaderboard.epoch_day(NOW, "UTC")
PROGRAMMERS = 240
COUNTRIES = ["BD", "IN", "NP", ""]


def hour_on(day: int, hour: int) -> dt.datetime:
    return dt.datetime.combine(leaderboard.day_to_date(day), dt.time(hour), tzinfo=dt.UTC)


def random_moment(rng: random.Random) -> dt.datetime:
    day = TODAY - rng.randrange(10)
    return hour_on(day, rng.randrange(NOW.hour + 1 if day == TODAY else 24))


@pytest.fixture(params=["sets of 1024", "sets of 6"])
def world(request, mongodb, now, boards_of_every_kind, monkeypatch):
    """Boards of every kind, programmers, and a log of random solves applied to the boards.

    With sets of 6, every order of a board is dozens of sets that the solves split and empty,
    and handles share their first letters, so sets are only cut where the manifest can tell
    their members apart."""
    prefixes = ["coder", "Coder"]
    if request.param == "sets of 6":
        monkeypatch.setattr(sets, "SET_MAX", 6)
        monkeypatch.setattr(sets, "SET_FILL", 4)
        monkeypatch.setattr(orders, "INLINE_MAX", 2)
        monkeypatch.setattr(sets, "ARRIVALS_MAX", 4)
        monkeypatch.setattr(journals, "JOURNAL_MAX", 8)  # journals folded every few solves
        prefixes = ["longhandle", "LongHandle"]
    rng = random.Random(20200119)
    boards = boards_of_every_kind
    # Handles in no particular order of their ids, in mixed case: the tie-break must not lean
    # on the order in which entries were stored.
    numbers = rng.sample(range(1000), PROGRAMMERS)
    programmers = [
        services.programmer_create(
            user=None,
            handle=f"{rng.choice(prefixes)}{n:03d}",
            country=rng.choice(COUNTRIES),
        )
        for n in numbers
    ]
    problems = Problem.objects.bulk_create(
        Problem(slug=f"r{i}", title=f"R{i}", points=rng.choice([10, 20, 50, 100]))
        for i in range(25)
    )
    pairs = {(p, q) for p in programmers for q in rng.sample(problems, rng.randrange(6))}
    pairs = sorted(pairs, key=lambda pair: (pair[0].pk, pair[1].slug))
    rng.shuffle(pairs)
    loaded, incremental = pairs[:-40], pairs[-40:]
    mongo.solves().insert_many(
        {
            "programmer_id": programmer.pk,
            "problem": problem.slug,
            "points": problem.points,
            "solved_at": random_moment(rng),
            "applied": True,
        }
        for programmer, problem in loaded
    )
    for board in boards.values():
        services.board_rebuild(board=board)
    for programmer, problem in incremental:
        services.solve_record(programmer=programmer, problem=problem, solved_at=random_moment(rng))
    return boards


def brute_force(board: Board, day: int, scope: str = "") -> list[tuple[int, str, int]]:
    """(rank, handle, score) of everybody on a board day, from the solves log alone."""
    programmers = {p.pk: p for p in Programmer.objects.all() if p.on_boards}
    daily: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    latest: dict[int, dict[int, dt.datetime]] = defaultdict(dict)
    for solve in mongo.solves().find():
        pid, solve_day = solve["programmer_id"], services.solve_day(solve["solved_at"])
        daily[pid][solve_day] += board.value_of(solve["points"])
        latest[pid][solve_day] = max(
            latest[pid].get(solve_day, solve["solved_at"]), solve["solved_at"]
        )
    places = []
    for pid, counts in daily.items():
        programmer = programmers.get(pid)
        if programmer is None or (scope and scope not in programmer.group_scopes()):
            continue
        if board.spec.is_all_time:
            score, reached = sum(counts.values()), max(latest[pid].values())
        else:
            score = leaderboard.window_sums(counts, board.spec, [day])[day]
            reached = leaderboard.reached_at(latest[pid], board.spec, day)
        if score > 0:
            places.append((score, reached, programmer.handle))
    places.sort(key=lambda place: (-place[0], place[1], place[2].lower()))
    ranked = []
    for position, (score, _, handle) in enumerate(places):
        if board.ties == Board.UNIQUE:
            rank = position + 1
        else:
            rank = 1 + sum(1 for other, _, _ in places if other > score)
        ranked.append((rank, handle, score))
    return ranked


CASES = [
    ("last-7-days", 0, ""),
    ("last-7-days", -3, ""),
    ("last-7-days", 2, ""),  # read when it comes: made from today's orders by its moves
    ("last-7-days", 0, "country:BD"),
    ("last-30-days", 0, ""),
    ("last-30-days", -6, ""),
    ("last-30-days", 0, "country:IN"),
    ("this-week", 0, ""),
    ("this-week", -2, ""),
    ("all-time", 0, ""),
]


def test_ranks_and_pages_equal_a_brute_force_count_on_random_data(world):
    checked = 0
    for slug, offset, scope in CASES:
        with time_machine.travel(hour_on(TODAY + max(offset, 0), NOW.hour), tick=False):
            checked += ranks_and_pages_checked(world, slug, offset, scope)
    assert checked > 1000


def ranks_and_pages_checked(world, slug: str, offset: int, scope: str) -> int:
    """Every page and every programmer's rank of one board day, against the brute force."""
    checked = 0
    if True:
        board, day = world[slug], TODAY + offset
        expected = brute_force(board, day, scope)
        assert len(expected) > 20, "the random data should fill every board"
        assert len({score for _, _, score in expected}) < len(expected), "ties should happen"
        case = (slug, offset, scope)

        # Every page, at two page sizes: the cached top page and the keyset pages beyond it.
        for page_size in (100, 37):
            listed, page_number = [], 1
            while True:
                page = selectors.board_page(
                    board=board, day=day, page=page_number, page_size=page_size, scope=scope
                )
                assert page.total == len(expected), case
                if not page.rows:
                    break
                listed += [(row.rank, row.handle, row.score) for row in page.rows]
                page_number += 1
            assert listed == expected, case

        # Every programmer's own rank, on the board or not.
        ranks = {handle: (rank, score) for rank, handle, score in expected}
        for programmer in Programmer.objects.all():
            if scope and scope not in programmer.group_scopes():
                continue
            standing = selectors.programmer_standing(
                board=board, programmer=programmer, day=day, scope=scope
            )
            assert (standing.rank, standing.score) == ranks.get(programmer.handle, (None, 0)), (
                case,
                programmer.handle,
            )
            checked += 1
    return checked


def test_neighbours_are_the_programmers_just_above_and_below(world):
    board = world["last-7-days"]
    expected = brute_force(board, TODAY)
    rng = random.Random(3)
    for index in rng.sample(range(len(expected)), 15):
        programmer = Programmer.objects.get(handle=expected[index][1])
        found = selectors.programmer_around(board=board, programmer=programmer, day=TODAY)
        as_tuples = [(row.rank, row.handle, row.score) for row in found.above + found.below]
        assert as_tuples == expected[max(0, index - 4) : index] + expected[index + 1 : index + 5]


def test_the_api_shows_the_same_ranks_as_the_selector(client, world):
    board = world["last-30-days"]
    expected = brute_force(board, TODAY - 1)
    pages = [
        client.get(f"/api/v1/boards/last-30-days?date=2020-01-18&page={n}&page_size=100").json()
        for n in range(1, len(expected) // 100 + 2)
    ]
    listed = [(e["rank"], e["handle"], e["score"]) for page in pages for e in page["entries"]]
    assert listed == expected
    for rank, handle, score in expected[::17]:
        body = client.get(f"/api/v1/boards/last-30-days/programmers/{handle}?date=2020-01-18")
        assert (body.json()["rank"], body.json()["score"]) == (rank, score)

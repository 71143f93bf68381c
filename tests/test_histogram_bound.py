"""No document grows with distinct scores (issue 35 §1): past `sets.HISTOGRAM_MAX` distinct
scores a manifest's histogram counts buckets of scores, and every count inside a bucket is
found by descending the tree; every rank, score range, page and group record stays exact.

The bound is made tiny here (a histogram of 3 or 16 buckets, over sets of 6 and nodes of 3), so
that a few dozen programmers with points totals make coarse roots, nodes and leaves; everything
a reader is told is compared with a brute force over the `solves` log, after a bulk import,
after solves recorded in the journal, and after the journals are folded. Then, pure and at the
real bound: the largest root, node and leaf of an order of 200,000 distinct scores.

Personas as in conftest; "now" is 2020-01-19 12:00 UTC (epoch day 18280), time zone UTC.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter, defaultdict

import bson
import pytest
import time_machine

from solutions import leaderboard, mongo, selectors, services
from solutions.leaderboard import (
    encoding,
    folds,
    groups,
    journals,
    moving,
    order_documents,
    orders,
    sets,
    tree,
)
from solutions.models import Board, Problem, Programmer
from tests.conftest import NOW, make_programmer

TODAY = 18280
COUNTRIES = ["BD", "IN", "NP"]


def brute_scores(board: Board, day: int) -> dict[int, int]:
    """{programmer id: score on the board of `day`} of those on it, from the log alone."""
    first = -(10**9) if board.spec.is_all_time else day - board.window_days + 1
    scores: dict[int, int] = defaultdict(int)
    for solve in mongo.solves().find():
        if first <= leaderboard.epoch_day(solve["solved_at"], "UTC") <= day:
            scores[solve["programmer_id"]] += board.value_of(solve["points"])
    return {pid: score for pid, score in scores.items() if score > 0}


def whole_board(board: Board, day: int, page_size: int) -> list[selectors.Row]:
    rows, page = [], 1
    while True:
        found = selectors.board_page(board=board, day=day, page=page, page_size=page_size)
        rows += found.rows
        if not found.rows:
            return rows
        page += 1


def check_board(board: Board, day: int, people: dict[int, Programmer], rng: random.Random):
    """Pages, every programmer's standing, a few places at once, score ranges, counts and group
    records of one board day, against the brute force."""
    scores = brute_scores(board, day)
    ordered = sorted(scores.values(), reverse=True)

    def rank(score: int) -> int:
        return 1 + sum(other > score for other in ordered)

    def at_or_above(score: int) -> int:
        return sum(other >= score for other in ordered)

    rows = whole_board(board, day, page_size=rng.choice([4, 7]))
    assert [(r.rank, r.score, r.at_or_above) for r in rows] == [
        (rank(s), s, at_or_above(s)) for s in ordered
    ]
    assert {r.programmer_id: r.score for r in rows} == scores
    assert selectors.board_page(board=board, day=day).total == len(ordered)
    for pid, programmer in people.items():
        standing = selectors.programmer_standing(board=board, programmer=programmer, day=day)
        score = scores.get(pid, 0)
        expected = (rank(score), at_or_above(score)) if score else (None, 0)
        assert (standing.rank, standing.at_or_above if score else 0) == expected
        assert standing.total == len(ordered)
    chosen = rng.sample(sorted(people.values(), key=lambda p: p.pk), 5)
    places = selectors.programmers_places(board=board, programmers=chosen, day=day)
    assert places.total == len(ordered)
    assert {pid: (row.rank, row.at_or_above) for pid, row in places.rows.items()} == {
        p.pk: (rank(scores[p.pk]), at_or_above(scores[p.pk])) for p in chosen if p.pk in scores
    }
    for _ in range(8):
        low = rng.randrange(1, ordered[0] + 2)
        high = rng.choice([None, low, low + rng.randrange(ordered[0] + 1)])
        inside = [s for s in ordered if s >= low and (high is None or s <= high)]
        assert selectors.board_at_or_above(board=board, score=low, day=day) == at_or_above(low)
        listed, page = [], 1
        while True:
            found = selectors.board_score_range(
                board=board, min_score=low, max_score=high, day=day, page=page, page_size=3
            )
            assert found.total == len(inside)
            if not found.rows:
                break
            listed += [(r.rank, r.score, r.at_or_above) for r in found.rows]
            page += 1
        assert listed == [(rank(s), s, at_or_above(s)) for s in inside], (low, high)
    check_groups(board, day, people, scores)


def check_groups(board: Board, day: int, people: dict[int, Programmer], scores: dict[int, int]):
    """Each country's record (its key and members) and rank, where it stands and its ranklist,
    against the keys of the brute-force histograms."""
    histograms: dict[str, Counter] = defaultdict(Counter)
    for pid, score in scores.items():
        histograms[f"country:{people[pid].country}"][score] += 1
    keys = {scope: groups.score_key(histogram) for scope, histogram in histograms.items()}
    expected = sorted(
        (1 + sum(other > key for other in keys.values()), scope.split(":")[1], key)
        for scope, key in keys.items()
    )
    listed = selectors.group_ranklist(board=board, kind="country", day=day, page_size=100)
    assert sorted((r.rank, r.value, r.key) for r in listed.rows) == expected
    for scope, histogram in histograms.items():
        found = selectors.group_standing(board=board, scope=scope, day=day)
        assert (found.key, found.members) == (keys[scope], sum(histogram.values()))


def root_shifts(board: Board) -> list[int]:
    """The shifts of the board's roots (not its journal)."""
    prefix = {"$regex": f"^{board.slug}\\|.*\\|"}
    documents = orders.orders().find({"_id": prefix}, {"hist": 1})
    return [encoding.histogram_unpack(doc.get("hist", b""))[1] for doc in documents]


def _coarse(monkeypatch, bound: int) -> None:
    """Orders that pass the bound with a few dozen programmers: tiny histograms, sets and nodes,
    a journal folded every dozen."""
    monkeypatch.setattr(sets, "HISTOGRAM_MAX", bound)
    for name, value in {"SET_MAX": 6, "SET_FILL": 3, "ARRIVALS_MAX": 2, "GONE_MAX": 2}.items():
        monkeypatch.setattr(sets, name, value)
    monkeypatch.setattr(tree, "NODE_MAX", 3)
    monkeypatch.setattr(tree, "NODE_FILL", 2)
    monkeypatch.setattr(orders, "INLINE_MAX", 1)
    monkeypatch.setattr(journals, "JOURNAL_MAX", 12)


def _history(rng: random.Random, crowd: list[Programmer]) -> list[Problem]:
    """Problems of random points, and a random history of nine days for most of the crowd."""
    problems = [
        Problem.objects.create(slug=f"h{i}", title=f"H{i}", points=rng.randrange(1, 400))
        for i in range(8)
    ]
    services.solves_import(
        solves=[
            (programmer, problem, NOW - dt.timedelta(seconds=rng.randrange(9 * 86400)))
            for programmer in crowd[:36]
            for problem in rng.sample(problems, rng.randrange(1, 5))
        ]
    )
    return problems


def _crowd(rng: random.Random) -> dict[int, Programmer]:
    made = (make_programmer(f"coder{i:02}", country=rng.choice(COUNTRIES)) for i in range(48))
    return {p.pk: p for p in made}


@pytest.mark.parametrize("bound", [3])  # 3 coarsens every order; 16 found no more
def test_ranks_ranges_pages_and_group_records_equal_a_brute_force_past_the_bound(
    mongodb, now, boards_of_every_kind, monkeypatch, bound
):
    _coarse(monkeypatch, bound)
    rng = random.Random(bound)
    people = _crowd(rng)
    crowd = list(people.values())
    problems = _history(rng, crowd)
    points, counts = boards_of_every_kind["all-time"], boards_of_every_kind["last-7-days"]
    check_board(points, TODAY, people, rng)
    assert max(root_shifts(points)) > 0  # the bound was passed: the roots count buckets
    # Solves one at a time: moves in the journal laid over coarse roots, folded every dozen.
    for programmer in rng.sample(crowd, 30):
        for problem in rng.sample(problems, rng.randrange(1, 3)):
            moment = NOW - dt.timedelta(seconds=rng.randrange(3 * 86400))
            services.solve_record(programmer=programmer, problem=problem, solved_at=moment)
        if rng.random() < 0.1:
            check_board(points, TODAY, people, rng)
    check_board(points, TODAY, people, rng)  # all time: one day
    for day in (TODAY, TODAY - 2):
        check_board(counts, day, people, rng)
    folds.journals_fold({slug: journals.journal_read(slug) for slug in ("all-time",)})
    check_board(points, TODAY, people, rng)


def test_new_days_made_from_coarse_orders_equal_a_brute_force(
    mongodb, now, boards_of_every_kind, monkeypatch
):
    """A week of points past the bound, its countries' histograms counting buckets: the days
    made from the day before (each group's record before and after its members' moves read
    from its order, not its histogram) rank as the log says, through solves in the last hour
    and after midnight."""
    _coarse(monkeypatch, 3)
    rng = random.Random(7)
    people = _crowd(rng)
    week = boards_of_every_kind["last-7-days"]
    week.metric = Board.POINTS
    week.save()
    problems = _history(rng, list(people.values()))
    check_board(week, TODAY, people, rng)
    assert max(root_shifts(week)) > 0
    midnight = dt.datetime(2020, 1, 20, tzinfo=dt.UTC)  # TODAY + 1 begins (UTC)
    for day in (TODAY + 1, TODAY + 2):
        for moment in (midnight - dt.timedelta(minutes=30), midnight + dt.timedelta(minutes=30)):
            with time_machine.travel(moment, tick=False):
                for programmer in rng.sample(list(people.values()), 4):
                    problem = rng.choice(problems)
                    services.solve_record(programmer=programmer, problem=problem, solved_at=moment)
        with time_machine.travel(midnight + dt.timedelta(hours=1), tick=False):
            check_board(week, day, people, rng)
            check_board(week, day - 1, people, rng)
        midnight += dt.timedelta(days=1)


# --- the largest documents, at the real bound (pure) ------------------------------------------


@pytest.mark.parametrize("fill", [sets.SET_FILL, 16])
def test_the_largest_root_and_node_stay_small_with_200_000_distinct_scores(monkeypatch, fill):
    """An order of 200,000 members with as many distinct scores, built as a rebuild builds it
    (also in sets of 16, for a tree of three levels): the root and every node of level 1 and
    more stay under 75 KB (a histogram of at most 4,096 buckets, 32 KB, and as many score
    counts in their entries), a node of level 0 under 1.1 MB (the exact score counts of at most
    NODE_MAX sets of SET_MAX members), where the root alone held 1.6 MB of histogram before."""
    monkeypatch.setattr(sets, "SET_FILL", fill)
    stamp = 2**32 - 1
    records = sorted(
        encoding.record_of(score << 32 | stamp, encoding.handle_bytes(f"p{score}", score))
        for score in range(1, 200_001)
    )
    root, rewrite = moving.sets_build(records, born=TODAY)
    nodes = tree.tree_build(root)
    assert root.level >= (2 if fill == 16 else 1) and root.shift > 0
    size = len(bson.encode(order_documents.manifest_document(root)))
    assert size < 75_000, size
    for node in nodes.values():
        size = len(bson.encode(order_documents.manifest_document(node)))
        assert size < (1_100_000 if node.level == 0 else 75_000), (node.level, size)
    # Every count a bucket holds is exact.
    assert sum(root.histogram.values()) == 200_000
    width = 1 << root.shift
    assert all(
        n == len(range(max(low, 1), min(low + width, 200_001))) for low, n in root.histogram.items()
    )

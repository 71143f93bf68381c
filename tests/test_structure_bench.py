"""The structure bench (`bench/structure/`): the order it builds from made-up sets
really holds the members it claims, its documents are the ones the store writes, and a read
touches the same documents at 10,240 and 204,800 members, and the same bytes up to a fuller node
(and the histogram's few more scores). Small sizes: the whole file runs in about a second."""

from __future__ import annotations

import random
from collections import Counter

import bson
import pytest

from bench.structure import Row, structure_bench, structure_table
from bench.structure.documents import (
    NODE_FIELDS,
    ORDER,
    PAGE_FIELDS,
    bson_size,
    node_document,
    set_document,
)
from bench.structure.members import handle_at, key_at, record_at, scores_between
from bench.structure.operations import PAGE_SIZE, moves_fold, page_read, place_read, random_moves
from bench.structure.order import Order
from solutions.leaderboard import encoding, order_documents, sets

# Whole sets, so that every page reads sets of the same size at both: 20 sets, then 400 (a root
# over one node, then a root over 7 nodes: the same levels).
SMALL, LARGE = 20 * sets.SET_FILL, 400 * sets.SET_FILL
READS = ("page at offset 0", "page in the middle", "last page", "a member's place")


@pytest.fixture(scope="module")
def rows():
    return structure_bench([SMALL, LARGE], repeat=2)


@pytest.fixture(scope="module")
def large():
    return Order(LARGE)


def row(rows, members: int, operation: str) -> Row:
    (found,) = [r for r in rows if r.members == members and r.operation == operation]
    return found


def test_the_table_has_every_operation_at_every_size(rows):
    table = structure_table(rows)
    operations = [*READS, "histogram (a rank)", "one move", "fold of 1,024 moves"]
    operations.append("fold of 1,024 solves")
    for members in (SMALL, LARGE):
        for operation in ["bulk build (all sets and nodes)", *operations]:
            assert f"| {members:,} | {operation} |" in table
    assert table.count("\n") == 2 + len(rows) == 2 + 2 * 9


def test_a_read_touches_the_same_documents_at_both_sizes_and_bytes_up_to_a_fuller_node(rows, large):
    assert row(rows, SMALL, "page at offset 0").levels == 2
    assert row(rows, LARGE, "page at offset 0").levels == 2
    node = max(
        bson_size({f: d[f] for f in NODE_FIELDS if f in d})
        for doc_id, d in large.documents.items()
        if doc_id != ORDER
    )
    more_scores = len(scores_between(0, LARGE)) - len(scores_between(0, SMALL))
    for operation in READS:
        small_read, large_read = (row(rows, n, operation) for n in (SMALL, LARGE))
        assert large_read.reads == small_read.reads == 3, operation
        grown = large_read.read_bytes - small_read.read_bytes
        assert 0 < grown <= node + encoding.HISTOGRAM.size * more_scores, operation
    # A rank is the root's histogram alone, whatever the size.
    assert row(rows, SMALL, "histogram (a rank)").reads == 1
    assert row(rows, LARGE, "histogram (a rank)").reads == 1


def test_a_move_reads_and_writes_a_node_a_level_and_only_the_version_of_the_set_it_leaves(rows):
    # Leaving one set (its version read, the record pushed on its gone list) and joining another's
    # arrivals: the root, then a leaf for each place.
    assert row(rows, SMALL, "one move").reads == 3  # the root, its one leaf, the set's version
    assert row(rows, LARGE, "one move").reads == 4  # the root, two leaves, the set's version
    assert row(rows, LARGE, "one move").writes == 4
    a_set = sets.SET_FILL * encoding.RECORD_BYTES
    for size in (SMALL, LARGE):
        move = row(rows, size, "one move")
        assert move.read_bytes < a_set / 2 and move.written_bytes < a_set / 2


def test_a_fold_of_solves_lists_who_left_a_set_instead_of_rewriting_it(rows):
    # 1,024 solves leave some 400 sets at random and join the ends of their scores' runs: the
    # sets left get gone lists, the few that take the arrivals in are rewritten.
    everything = row(rows, LARGE, "bulk build (all sets and nodes)").written_bytes
    fold = row(rows, LARGE, "fold of 1,024 solves")
    assert fold.written_bytes < everything / 3
    assert fold.read_bytes < everything / 3


def test_the_order_holds_the_members_record_at_makes(large):
    assert page_read(large, 0) == [record_at(n) for n in range(PAGE_SIZE)]
    first = encoding.Member.from_record(page_read(large, 0)[0])
    assert first == encoding.Member(key_at(0), handle_at(0), 1)
    assert page_read(large, LARGE - 3) == [record_at(n) for n in range(LARGE - 3, LARGE)]
    # A page across two nodes of level 0.
    border = large.read(ORDER).length(0) - 10
    assert page_read(large, border) == [record_at(n) for n in range(border, border + PAGE_SIZE)]
    rng = random.Random(5)
    for n in rng.sample(range(LARGE), 20):
        assert place_read(large, record_at(n)) == n
    assert place_read(large, record_at(LARGE)) is None  # past the last: not listed


def test_record_at_sorts_in_listing_order_and_its_separators_all_differ():
    members = sorted({*range(0, 3_000), *random.Random(1).sample(range(10**8), 3_000)})
    records = [record_at(n) for n in members]
    assert records == sorted(records)
    assert len({encoding.separator(r) for r in records}) == len(records)
    for n in members[::97]:
        assert records[members.index(n)] == encoding.Member(key_at(n), handle_at(n), n + 1).record()
    scores = Counter(encoding.record_score(r) for r in records[:3_000])
    assert scores == scores_between(0, 3_000)


def test_documents_are_as_big_as_the_store_writes_them(large):
    root = large.read(ORDER)
    document = node_document(ORDER, root)
    stored = bson.encode({"_id": ORDER, **order_documents.manifest_document(root)})
    assert bson_size(document) == len(stored)
    assert bson_size(document) == len(bson.encode(document))
    blob = record_at(7) * 3
    assert bson_size(set_document(2**61, 3, blob)) == len(bson.encode(set_document(2**61, 3, blob)))
    assert set(PAGE_FIELDS) == {"_id", *order_documents.PAGE, "folded"}
    assert set(NODE_FIELDS) == set(PAGE_FIELDS) - {"hist"}


def test_a_fold_moves_its_members_and_keeps_every_level_counted(large):
    moves = random_moves(large, random.Random(3), 300)
    root = moves_fold(large, moves)
    assert root.total == LARGE
    expected = Counter(scores_between(0, LARGE))
    for move in moves:
        expected[encoding.record_score(move.old)] -= 1
        expected[encoding.record_score(move.new)] += 1
    assert root.histogram == {s: n for s, n in expected.items() if n}
    # The built order is left as it was: the next run starts from the same state.
    assert large.read(ORDER).histogram == scores_between(0, LARGE)


def test_past_four_million_members_a_node_counts_more_members_of_a_score_than_two_bytes_hold():
    order = Order(5_000_000)
    assert order.levels == 3
    assert place_read(order, record_at(4_321_000)) == 4_321_000

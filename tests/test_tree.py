"""The order of a board day as a manifest of manifests (`tree`), held in memory the way the store
holds it: after random builds and random batches of moves, the members listed leaf after leaf are
the brute-force listing, every level's entries agree with what they list, and readers descending
from the root (with a journal laid level by level) find every page and every place."""

from __future__ import annotations

import copy
import datetime as dt
import random
import struct
from collections import Counter

import pytest

from solutions.leaderboard import encoding, maths, moving, order_documents, sets, tree
from tests.support.sets import journal_pairs


@pytest.fixture(autouse=True)
def small_nodes(monkeypatch):
    """Small sets and nodes, so that a few hundred members make several levels."""
    monkeypatch.setattr(sets, "SET_MAX", 8)
    monkeypatch.setattr(sets, "ARRIVALS_MAX", 6)
    monkeypatch.setattr(sets, "GONE_MAX", 3)
    monkeypatch.setattr(tree, "NODE_MAX", 4)
    monkeypatch.setattr(tree, "NODE_FILL", 2)


def record(rng: random.Random, pid: int) -> bytes:
    reached = maths.KEY_EPOCH + dt.timedelta(seconds=rng.randrange(10**5))
    return encoding.Member(maths.sort_key(rng.randrange(1, 9), reached), f"c{pid}", pid).record()


class Order:
    """One order's documents as the store keeps them: the root, the nodes and the sets."""

    def __init__(self, records: list[bytes], fill: int) -> None:
        self.root, built = moving.sets_build(sorted(records), fill=fill)
        self.sets = {s: vb for s, vb in built.written.items()}
        self.gone: Counter[int] = Counter()  # the records each set lists as gone
        self.nodes = tree.tree_build(self.root)

    def move(self, moves: list[moving.Move]) -> None:
        """What a fold does: apply moves at the leaves, the levels above recomputed."""
        rewrite = tree.NodesRewrite()
        if self.root.level == 0:
            self.leaf_apply(0, self.root, moves)
        else:
            children = {i: copy.deepcopy(n) for i, n in self.nodes.items()}
            tree.tree_apply(self.root, moves, children, self.leaf_apply, rewrite)
        tree.root_settle(self.root, rewrite)
        for node_id in rewrite.dropped:
            del self.nodes[node_id]
        self.nodes.update(rewrite.written)

    def leaf_apply(self, _leaf_id: int, leaf: sets.Manifest, moves: list[moving.Move]) -> None:
        """As a writer sure of what the sets hold: sets read whole or left by a gone list."""
        whole, fold, leaving = moving.sets_plan(leaf, moves, self.gone)
        loaded = {s: self.sets[s][1] for s in whole if s in self.sets}
        rewrite = moving.moves_apply(leaf, loaded, moves, fold & set(loaded), leaving)
        for set_id, written in rewrite.written.items():
            self.sets[set_id], self.gone[set_id] = written, 0
        for set_id, (version, records) in rewrite.gone.items():
            kept = [r for r in encoding.records_of(self.sets[set_id][1]) if r not in set(records)]
            assert len(kept) == len(encoding.records_of(self.sets[set_id][1])) - len(records)
            self.sets[set_id] = (version, b"".join(kept))
            self.gone[set_id] += len(records)
            assert self.gone[set_id] <= sets.GONE_MAX
        for set_id in rewrite.dropped:
            self.sets.pop(set_id, None)

    def leaves(self, node: sets.Manifest | None = None):
        node = self.root if node is None else node
        if node.level == 0:
            yield node
            return
        for child_id in node.set_ids():
            yield from self.leaves(self.nodes[child_id])

    def listing(self) -> list[bytes]:
        records = []
        for leaf in self.leaves():
            for index in range(len(leaf)):
                set_id = leaf.set_id(index)
                written = encoding.records_of(self.sets.get(set_id, (0, b""))[1])
                records += sorted(written + leaf.arrivals_of(set_id))
        return records


def check_levels(order: Order, node: sets.Manifest) -> None:
    """Each entry of a node above the sets is what its child computes to, at most NODE_MAX."""
    assert len(node) <= tree.NODE_MAX
    if node.level == 0:
        return
    for index, child_id in enumerate(node.set_ids()):
        child = order.nodes[child_id]
        assert child.level == node.level - 1
        assert node.info(index) == tree.node_entry(child_id, child)
        check_levels(order, child)


def descend(order: Order, offset: int) -> tuple[sets.Manifest, int]:
    """The leaf holding 0-based `offset` and the offset inside it, as a reader finds it."""
    node = order.root
    while node.level:
        index, offset = node.set_at(offset)
        node = order.nodes[node.set_id(index)]
    return node, offset


@pytest.mark.parametrize("seed", range(12))
def test_moves_through_the_levels_keep_the_brute_force_listing(seed):
    rng = random.Random(seed)
    held = {pid: record(rng, pid) for pid in range(rng.randrange(0, 160))}
    order = Order(list(held.values()), fill=rng.choice([2, 4, 6]))
    for _batch in range(rng.randrange(3, 12)):
        moves = []
        for pid in rng.sample(range(220), rng.randrange(1, 40)):
            new = None if rng.random() < 0.3 else record(rng, pid)
            old = held.pop(pid, None)
            if new is not None:
                held[pid] = new
            if old is not None or new is not None:
                moves.append(moving.Move(old, new))
        order.move(moves)
        expected = sorted(held.values())
        assert order.listing() == expected
        assert order.root.histogram == dict(Counter(encoding.record_score(r) for r in expected))
        assert order.root.total == len(expected)
        check_levels(order, order.root)
    for offset in rng.sample(range(len(expected)), min(10, len(expected))):
        leaf, inside = descend(order, offset)
        index, inside = leaf.set_at(inside)
        set_id = leaf.set_id(index)
        written = encoding.records_of(order.sets.get(set_id, (0, b""))[1])
        assert sorted(written + leaf.arrivals_of(set_id))[inside] == expected[offset]


def test_a_big_order_grows_levels_and_a_page_reads_one_node_a_level():
    rng = random.Random(7)
    records = [record(rng, pid) for pid in range(600)]
    order = Order(records, fill=4)
    # 150 sets of 4, nodes of 2: levels until the root lists at most 4.
    assert order.root.level >= 5
    assert all(len(node) <= tree.NODE_MAX for node in order.nodes.values())
    assert order.listing() == sorted(records)


@pytest.mark.parametrize("seed", range(6))
def test_a_journal_laid_level_by_level_lists_what_the_moves_make(seed):
    rng = random.Random(seed)
    held = {pid: record(rng, pid) for pid in range(rng.randrange(40, 140))}
    order = Order(list(held.values()), fill=4)
    pairs, now = journal_pairs(rng, held, record, ids=160, moving=40)
    expected = sorted(now.values())
    root = copy.deepcopy(order.root)
    root.journal_lay(pairs)
    assert root.histogram == dict(Counter(encoding.record_score(r) for r in expected))
    assert root.total == len(expected)
    # A reader at every offset: down the levels, each node with its share of the pairs laid.
    for offset in range(len(expected)):
        node, inside, laid = root, offset, pairs
        while node.level:
            index, inside = node.set_at(inside)
            laid = tree.pairs_route(node, index, laid)
            node = copy.deepcopy(order.nodes[node.set_id(index)])
            node.journal_lay(laid)
        index, inside = node.set_at(inside)
        set_id = node.set_id(index)
        departed = node.departures_of(set_id)
        written = encoding.records_of(order.sets.get(set_id, (0, b""))[1])
        listed = sorted([r for r in written if r not in departed] + node.arrivals_of(set_id))
        assert listed[inside] == expected[offset]


def test_a_manifest_written_with_two_byte_counts_reads_as_it_was_written():
    """Manifests stored before nodes needed four-byte counts ("scores", 6 bytes a pair) read the
    same, widened as they are read."""
    rng = random.Random(3)
    manifest, _rewrite = moving.sets_build(sorted(record(rng, pid) for pid in range(40)), fill=4)
    document = order_documents.manifest_document(manifest)
    pairs = [
        encoding.SCORE.unpack_from(document["pairs"], i)
        for i in range(0, len(document["pairs"]), 8)
    ]
    old = {k: v for k, v in document.items() if k != "pairs"}
    old["scores"] = b"".join(struct.pack(">IH", score, members) for score, members in pairs)
    assert order_documents.manifest_decode(old).score_pairs == manifest.score_pairs
    assert order_documents.manifest_decode(old).info(3) == manifest.info(3)

"""Reading an order: a page, a rank or a neighbourhood of a board day, by `_id` at any size.

A request asks its questions of one `OrderView`: the day's part of the journal and the root of
the order (asking only for the columns it uses) are read once, then the nodes on the way down
(see `tree`: one a level, the levels growing with the logarithm of the board) and the sets that
hold the answer, each document at most once however many questions the request asks (a rank,
the place inside a tie, the neighbours around it). Every read is by `_id`, at any size.

The journal's pairs are laid over the root as departures and arrivals (`sets.Manifest
.journal_lay`) unless the root already holds that epoch, and each node read on the way down gets
the pairs that fall in it (`tree.pairs_route`), so lengths and offsets agree at every level.

A writer writes sets and nodes before the root (see `orders`): a reader that finds one newer than
the entry that lists it reads again from the start (`order_read`), and on its last try takes
them as they are.

A day with more distinct scores than a root's histogram holds counts them in buckets (see
`sets.Manifest`): a question about a score inside a bucket (how many score it or more) is
answered by descending the tree to the first member with a lower score, as a place is found
(`OrderView.at_or_above`), so a request asks its view for the histogram exact at the scores it
ranks (`OrderView.histogram_at`); a question asked of the histogram alone reads the order's
documents again, for that descent (`_Coarse`). A day with few distinct scores reads the root.

A day past its board's frontier has no orders yet (see `day_change`): on a site where no lease
holder prepared it before midnight, its first reader waits for one to (`applier.day_wait`).
"""

from __future__ import annotations

import bisect
import functools
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from . import encoding, groups, journals, maths, moving, order_documents, orders, sets, tree

READ_RETRIES = 3
T = TypeVar("T")
Pairs = list[tuple[bytes | None, bytes | None]]


class _Behind(Exception):
    """A set or node is newer than the entry listing it: a writer is between its writes."""


class _NotPrepared(Exception):
    """The day is past its board's frontier: its orders are not made yet."""


class _Coarse(Exception):
    """The histogram counts buckets and the root was read for its histogram alone: a count
    inside a bucket descends the tree, which needs the root's other columns."""


class OrderView:
    """One board day's order as one request reads it: each document at most once."""

    def __init__(
        self,
        board_slug: str,
        day_key: str,
        scope: str,
        *,
        last_try: bool,
        fields: dict,
        laid: tuple[int, Pairs] | None = None,
    ) -> None:
        # The journal's part first: a fold writes the roots before it empties the journal, so a
        # part read before the root is either still to be laid (the root's `folded` is older
        # than the part's epoch) or already in it. `laid`: (epoch, pairs) to lay instead.
        epoch, pairs, frontier = (
            laid + (None,) if laid else journals.journal_part(board_slug, day_key, scope)
        )
        if frontier is not None and day_key != maths.ALL_TIME_KEY and int(day_key) > frontier:
            raise _NotPrepared
        self.order = orders.order_id(board_slug, day_key, scope)
        self.root = orders.manifest_read(self.order, fields)
        self.pairs: Pairs = pairs if self.root.folded < epoch else []
        self.root.journal_lay(self.pairs)
        self.last_try = last_try
        self._nodes: dict[int, tuple[sets.Manifest, Pairs]] = {}
        self._sets: dict[int, tuple[int, bytes]] = dict(self.root.inline)

    @property
    def histogram(self) -> dict[int, int]:
        """{score: members} of the day as the root counts them (by bucket when coarse: ask
        `histogram_at` for counts exact at given scores)."""
        return self.root.histogram

    def histogram_at(self, thresholds: Iterable[int]) -> dict[int, int]:
        """The day's histogram, exact at these scores: for each t of them, the counts of the
        keys t or more add up to the members scoring t or more (so `maths.at_or_above`,
        `shared_rank` at t - 1 and `board_total` at 1 are exact). The root alone, unless it
        counts buckets and some t falls inside one: that bucket is cut at t by a descent."""
        shift, histogram = self.root.shift, self.root.histogram
        inside = sorted({t for t in thresholds if t > 0 and encoding.bucket(t, shift) != t})
        if not inside:
            return histogram
        if self.root.lasts is None:
            raise _Coarse
        refined, width = dict(histogram), 1 << shift
        for low in sorted({encoding.bucket(t, shift) for t in inside}):
            above = sum(n for score, n in histogram.items() if score >= low + width)
            cuts = [t for t in inside if encoding.bucket(t, shift) == low]
            counts = [above + refined.pop(low, 0), *map(self.at_or_above, cuts), above]
            for edge, count, below in zip([low, *cuts], counts, counts[1:], strict=False):
                if count > below:
                    refined[edge] = count - below
        return refined

    def at_or_above(self, score: int) -> int:
        """How many members score `score` or more: those before the first with less, found by
        descending the tree like a place."""
        return self.before(encoding.score_probe(score - 1))

    def group_record(self, scope: str) -> bytes | None:
        """The group's record in its ranklist (see `groups`), from the histogram, or when it
        counts buckets from the scores of the group's best members, read in order."""
        if not self.root.shift:
            return groups.record(scope, self.histogram)
        total = groups.members(self.histogram_at([1]))
        return groups.record_of(scope, total, self._scores_from_top)

    def _scores_from_top(self, count: int) -> list[int]:
        return [encoding.record_score(record) for record in self.records(0, count)]

    def _child(self, node: sets.Manifest, index: int, pairs: Pairs) -> tuple[sets.Manifest, Pairs]:
        """The node listed at `index` of `node`, with its share of the journal laid over it."""
        child_id = node.set_id(index)
        if child_id not in self._nodes:
            child = orders.node_read(self.order, child_id)
            if child is None or child.version != node.set_version(index):
                if not self.last_try:
                    raise _Behind
                child = child or sets.Manifest(level=node.level - 1)
            routed = tree.pairs_route(node, index, pairs)
            child.journal_lay(routed)
            self._nodes[child_id] = (child, routed)
        return self._nodes[child_id]

    def _leaf_at(self, offset: int) -> tuple[sets.Manifest, int] | None:
        """The node of level 0 holding 0-based `offset`, and the offset inside it."""
        node, pairs = self.root, self.pairs
        while node.level:
            found = node.set_at(offset)
            if found is None:
                return None
            index, offset = found
            node, pairs = self._child(node, index, pairs)
        return node, offset

    def _leaf_for(self, probe: bytes) -> tuple[sets.Manifest, int]:
        """The node of level 0 where bytes `probe` sort, and how many members sort before it."""
        node, pairs, before = self.root, self.pairs, 0
        while node.level:
            index = node.set_for(probe)
            before += node.offset_of_set(index)
            node, pairs = self._child(node, index, pairs)
        return node, before

    def _records(self, leaf: sets.Manifest, indexes: Iterable[int]) -> list[bytes]:
        """The records of a leaf's listed sets with their arrivals and without their departures,
        in order (one `$in` read of those not read yet). On the last try a set newer than its
        entry is taken as it is, the entries recomputed from it."""
        listed = [(leaf.set_id(i), leaf.set_version(i)) for i in sorted(set(indexes))]
        unread = [set_id for set_id, _v in listed if set_id not in self._sets]
        self._sets.update(orders.sets_fetch(self.order, unread))
        stored = {set_id: self._sets[set_id] for set_id, _v in listed if set_id in self._sets}
        if any(stored.get(set_id, (None,))[0] != version for set_id, version in listed):
            if not self.last_try:
                raise _Behind
            moving.manifest_repair(leaf, stored)
        records: list[bytes] = []
        for set_id, _version in listed:
            written = encoding.records_of(stored.get(set_id, (0, b""))[1])
            if departed := leaf.departures_of(set_id):
                written = [record for record in written if record not in departed]
            arrived = leaf.arrivals_of(set_id)
            records += sorted(written + arrived) if arrived else written
        return records

    def records(self, offset: int, limit: int) -> list[bytes]:
        """`limit` records from 0-based `offset`, in listing order: the one or two sets holding
        them (under two leaves only when the page runs across their border)."""
        got: list[bytes] = []
        while len(got) < limit and (found := self._leaf_at(offset + len(got))):
            leaf, inside = found
            first = leaf.set_at(inside)
            if first is None:
                break
            index, inside = first
            wanted = leaf.sets_covering(index, inside, limit - len(got))
            more = self._records(leaf, wanted)[inside : inside + limit - len(got)]
            if not more:
                break
            got += more
        return got

    def before(self, probe: bytes) -> int:
        """How many members sort before the bytes `probe` (a record's width). Sets and nodes are
        cut only where separators differ, so every member of those before the one found sorts
        before `probe`, and none of those after."""
        leaf, before = self._leaf_for(probe)
        index = leaf.set_for(probe)
        if index < 0:
            return before
        records = self._records(leaf, [index])
        return before + leaf.offset_of_set(index) + bisect.bisect_left(records, probe)

    def position(self, record: bytes) -> int | None:
        """A member's 0-based place in the listing order (None: not listed)."""
        leaf, before = self._leaf_for(record)
        index = leaf.set_for(record)
        if index < 0:
            return None
        records = self._records(leaf, [index])
        position = bisect.bisect_left(records, record)
        if position >= len(records) or records[position] != record:
            return None
        return before + leaf.offset_of_set(index) + position

    def walk(self) -> Iterator[bytes]:
        """Every record in listing order, a few sets at a time (background work only)."""
        yield from self._walk(self.root, self.pairs)

    def _walk(self, node: sets.Manifest, pairs: Pairs) -> Iterator[bytes]:
        if node.level == 0:
            for start in range(0, len(node), 16):
                yield from self._records(node, range(start, min(start + 16, len(node))))
                self._sets.clear()  # memory stays bounded however big the board
            return
        for index in range(len(node)):
            yield from self._walk(*self._child(node, index, pairs))
            self._nodes.pop(node.set_id(index), None)


def order_read(
    board_slug: str,
    day_key: str,
    scope: str,
    question: Callable[[OrderView], T],
    *,
    fields: dict = order_documents.PAGE,
    laid: tuple[int, Pairs] | None = None,
) -> T:
    """Answer `question` about a board day's order, each document read at most once; again from
    the start when a writer was caught between its writes, or once the day is prepared, or with
    every column of the root when the histogram alone cannot answer (`_Coarse`)."""
    attempt = 0
    while True:
        last_try = attempt == READ_RETRIES - 1
        try:
            view = OrderView(
                board_slug, day_key, scope, last_try=last_try, fields=fields, laid=laid
            )
            return question(view)
        except _Coarse:
            fields = order_documents.PAGE
        except _Behind:
            time.sleep(0.002 * (attempt + 1))
            attempt += 1
        except _NotPrepared:
            # Imported here: the applier prepares days with `day_change`, which reads orders.
            from . import applier

            applier.day_wait(board_slug, int(day_key))


def histogram_read(
    board_slug: str, day_key: str, scope: str = "", at: Iterable[int] = (1,)
) -> dict[int, int]:
    """{score: number of programmers} of one board day, exact at the scores `at` (see
    `OrderView.histogram_at`): the journal's part and the root (then the order read again
    and descended, when the root counts buckets and a score of `at` falls inside one)."""
    wanted = list(at)
    return order_read(
        board_slug,
        day_key,
        scope,
        lambda view: view.histogram_at(wanted),
        fields=order_documents.HISTOGRAM,
    )


def rank_thresholds(scores: Iterable[int]) -> set[int]:
    """The scores at which a histogram must be exact to give these scores their shared ranks,
    how many score as much or more, and the board's total."""
    return {1, *(t for score in scores for t in (score, score + 1))}


def group_record(
    board_slug: str, day_key: str, scope: str, laid: tuple[int, Pairs] | None = None
) -> bytes | None:
    """A group's record in its ranklist on a board day, from its order (`OrderView
    .group_record`): the root's histogram, or the group's best members when it counts buckets.
    `laid`: the (epoch, pairs) to lay over it instead of the journal's part."""
    question = functools.partial(OrderView.group_record, scope=scope)
    return order_read(
        board_slug, day_key, scope, question, fields=order_documents.HISTOGRAM, laid=laid
    )


def group_records_moved(
    board_slug: str, day_key: str, scope: str, epoch: int, before: dict, after: dict
) -> tuple[bytes | None, bytes | None]:
    """A group's records before and after a batch moves some of its members (`before`: their
    pairs as the journal holds them, `after`: once moved), when its histogram counts buckets:
    from its order with the journal's whole part laid over it, read for it, as the histogram
    change the journal keeps counts exact scores that buckets cannot take (see `journals`)."""
    _epoch, pairs, _frontier = journals.journal_part(board_slug, day_key, scope)
    moved = {*before, *after}
    kept = [pair for pair in pairs if encoding.record_programmer(pair[0] or pair[1]) not in moved]
    old = group_record(board_slug, day_key, scope, laid=(epoch, pairs))
    new = group_record(board_slug, day_key, scope, laid=(epoch, [*kept, *after.values()]))
    return old, new


def order_page(
    board_slug: str, day_key: str, scope: str, offset: int, limit: int
) -> tuple[dict[int, int], list[encoding.Member]]:
    """A board day's histogram and `limit` members from 0-based `offset`, in listing order: the
    root, a node a level, then the one or two sets holding them."""

    def page(view: OrderView) -> tuple[dict[int, int], list[bytes]]:
        records = view.records(offset, limit)
        scores = map(encoding.record_score, records)
        return view.histogram_at(rank_thresholds(scores)), records

    histogram, records = order_read(board_slug, day_key, scope, page)
    return histogram, [encoding.Member.from_record(record) for record in records]


def member_position(
    board_slug: str, day_key: str, scope: str, member: encoding.Member
) -> int | None:
    """A member's 0-based place in the listing order of a board day (None: not listed)."""
    return order_read(board_slug, day_key, scope, lambda view: view.position(member.record()))


def records_before(board_slug: str, day_key: str, scope: str, probe: bytes) -> int:
    """How many members of a board day's order sort before the bytes `probe`."""
    return order_read(board_slug, day_key, scope, lambda view: view.before(probe))


def members_in_order(board_slug: str, day_key: str, scope: str = "") -> Iterator[encoding.Member]:
    """Every member of a board day in listing order, a few sets at a time (background work such
    as rank-history snapshots: its cost grows with the board, so never on a request)."""
    for record in records_in_order(board_slug, day_key, scope):
        yield encoding.Member.from_record(record)


def records_in_order(
    board_slug: str, day_key: str, scope: str = "", *, laid: tuple[int, Pairs] | None = None
) -> Iterator[bytes]:
    """Every record of a board day's order (members, or a ranklist's groups) in listing order,
    a few sets at a time (background work only). `laid`: (epoch, pairs) to lay instead of the
    journal's part, as `OrderView` takes it."""
    fields = order_documents.PAGE
    view = order_read(board_slug, day_key, scope, lambda view: view, fields=fields, laid=laid)
    view.last_try = True
    yield from view.walk()

"""The order structure alone, in memory, at a million, 25 million and 100 million members.

Why it exists: the tree of manifests (`leaderboard.tree`) promises that a page, a place, a rank
and a move read and write one node a level and one or two sets, so that their cost barely moves
from a million members to a hundred million (one more level is one more node). `manage.py bench`
measures the site through MongoDB at sizes a test machine can seed; this measures the structure
where no database could be seeded in a minute, and shows what each operation touches:

- **bytes** are the BSON size of every document a real reader or writer would read and write:
  the root, each node on the path and the sets. Nodes are kept as the documents the store writes
  (`node_document`, the fields of `order_documents.manifest_document` with the `_id`) and
  decoded as `order_documents.manifest_decode` decodes them, readers asking only for the columns
  a page reads (the histogram at the root only: below it nobody uses a node's).
  Only the bytes count, not the commands that would carry them;
- **time** is the median and 95th percentile of `repeat` runs of the pure work: decoding the
  documents read, descending, applying moves, encoding the documents written. Making up a set's
  records (which stands for the database's reply) and counting bytes are left out.

A hundred million records do not fit in memory, so the order is built from what sets *would*
hold: member n is `record_at(n)`, monotonic in listing order (scores fall in groups that widen
with n, about 460 scores at 100M like a real board's long tail; inside a score group the
later-numbered member reached it later; handles are n in base 36, so the separators of any two
members differ). Each set's manifest entry is computed arithmetically, the tree is built over
them with `tree.tree_build`, and a set's records are made from `record_at` when an operation
reads it. Moves apply to the documents read, never to the built order, so every run starts from
the same state. No database: the documents are only encoded, as the store would send them.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import math
import random
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from solutions.leaderboard import encoding, maths, moving, order_documents, sets, tree

PAGE_SIZE = 50
FOLD_MOVES = 1_024  # the moves a journal holds before it is folded
ORDER = "bench|20000|"  # the `_id` of the order's root, as `orders.order_id` names it
# What a reader asks of the root for a page or a place (`order_documents.PAGE`, with the journal
# epoch), of the nodes below it (the same but the histogram), and of the root for a rank
# (`order_documents.HISTOGRAM`).
NODE_FIELDS = ("_id", "v", "lvl", "ids", "vers", "lens", "lasts", "inline", "arrivals", "folded")
PAGE_FIELDS = (*NODE_FIELDS, "hist")
HISTOGRAM_FIELDS = ("_id", "hist", "folded")

# Members' scores: group g starts at member 2^(g / SCORE_STEP) - 1, and the best is SCORE_TOP.
SCORE_TOP = 1_000
SCORE_STEP = 20
HANDLE_LETTERS = 8  # n in base 36: every separator differs, up to 36^8 members
MEMBERS_MAX = 36**HANDLE_LETTERS
REACHED = 100_000_000  # seconds since `maths.KEY_EPOCH` when a score group's first member got it
LATER = 200_000_000  # seconds after REACHED when the bench's solves reach a score: after anybody
_GROUP_STARTS = sorted(
    {math.floor(2 ** (g / SCORE_STEP)) - 1 for g in range(SCORE_STEP * 42)} | {MEMBERS_MAX}
)
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"  # in the order their bytes sort
_PAIRS = [a + b for a in _DIGITS for b in _DIGITS]


def _group(n: int) -> int:
    return bisect.bisect_right(_GROUP_STARTS, n) - 1


def key_at(n: int) -> int:
    """The sort key of member n: a worse score every group, a later time inside one."""
    group = _group(n)
    seconds = REACHED + n - _GROUP_STARTS[group]
    return (SCORE_TOP - group) << maths.TIME_BITS | (2**maths.TIME_BITS - 1 - seconds)


def handle_at(n: int) -> str:
    """n in 8 letters of base 36, two at a time (the bench makes millions of them)."""
    return (
        _PAIRS[n // 36**6] + _PAIRS[n // 36**4 % 1296] + _PAIRS[n // 1296 % 1296] + _PAIRS[n % 1296]
    )


def record_at(n: int, key: int | None = None) -> bytes:
    """Member n's record (`sets.Member(key, handle_at(n), n + 1).record()`, made faster), with
    its own key or another one (the member moved)."""
    assert 0 <= n < MEMBERS_MAX
    key = key_at(n) if key is None else key
    return (
        (encoding.MAX_KEY - key).to_bytes(8, "big")
        + handle_at(n).encode().ljust(encoding.HANDLE_BYTES, b"\0")
        + (n + 1).to_bytes(8, "big")
        + bytes(4)
    )


def scores_between(start: int, end: int) -> dict[int, int]:
    """{score: members} of members start to end - 1, by their groups."""
    counts, group = {}, _group(start)
    while _GROUP_STARTS[group] < end:
        members = min(end, _GROUP_STARTS[group + 1]) - max(start, _GROUP_STARTS[group])
        if members > 0:
            counts[SCORE_TOP - group] = members
        group += 1
    return counts


# --- documents, as the store keeps them --------------------------------------------------------


def bson_size(document: dict) -> int:
    """The size of a document as BSON encodes it (the values the store uses: strings, ints,
    binaries, None and lists), computed without encoding it."""
    return 5 + sum(2 + len(name.encode()) + _value_size(v) for name, v in document.items())


def _value_size(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return 4 if -(2**31) <= value < 2**31 else 8
    if isinstance(value, str):
        return 5 + len(value.encode())
    if isinstance(value, bytes | bytearray):
        return 5 + len(value)
    if isinstance(value, list):
        return bson_size({str(i): v for i, v in enumerate(value)})
    if isinstance(value, dict):
        return bson_size(value)
    raise TypeError(f"no BSON size for {type(value).__name__}")


def node_document(doc_id: str, node: sets.Manifest) -> dict:
    """A node (or the root) as stored: `order_documents.manifest_document` with its `_id`."""
    return {"_id": doc_id, **order_documents.manifest_document(node)}


def node_decode(document: dict) -> sets.Manifest:
    """A node from the fields read, as the store decodes it."""
    return order_documents.manifest_decode(document)


def set_document(set_id: int, version: int, blob: bytes) -> dict:
    return {"_id": f"{ORDER}|{set_id}", "v": version, "r": blob}


def set_version_document(set_id: int) -> dict:
    """What a fold reads of a set it may leave by a gone list: its version and gone count."""
    return {"_id": f"{ORDER}|{set_id}", "v": 1, "n": 0}


def gone_update(set_id: int, version: int, records: list[bytes]) -> dict:
    """The update that lists records as gone beside a set's own (`orders`), as it is sent."""
    change = {
        "$set": {"v": version},
        "$push": {"g": {"$each": records}},
        "$inc": {"n": len(records)},
    }
    return {"q": {"_id": f"{ORDER}|{set_id}", "v": version - 1}, "u": change}


# --- an order built from what its sets would hold ----------------------------------------------


@dataclass
class Ledger:
    """What one run of an operation read and wrote, and the time it spent on the bench's own
    work, which its time leaves out."""

    read: list[int] = field(default_factory=list)  # the bytes of each document read
    written: list[int] = field(default_factory=list)
    untimed: float = 0.0  # seconds spent making up sets and counting bytes


class Order:
    """An order of `size` members as the store would hold it: the root's and the nodes' documents
    (built with `tree.tree_build`), and sets of `sets.SET_FILL` members, set i (its id i + 1)
    holding members i * SET_FILL onwards, made from `record_at` when read."""

    def __init__(self, size: int) -> None:
        assert 0 < size <= MEMBERS_MAX
        self.size = size
        count = -(-size // sets.SET_FILL)
        root = sets.Manifest(version=1)
        for start in range(0, count, 8_192):  # a splice a chunk: few entries held at once
            chunk = range(start, min(start + 8_192, count))
            root.splice(len(root), 0, [self._set_info(i) for i in chunk])
        nodes = tree.tree_build(root)
        self.documents = {
            self.node_id(n): node_document(self.node_id(n), m) for n, m in nodes.items()
        }
        self.documents[ORDER] = node_document(ORDER, root)
        self.sets_bytes = sum(
            bson_size(set_document(i + 1, 1, b"")) + encoding.RECORD_BYTES * len(self._set_range(i))
            for i in range(count)
        )
        self.levels = root.level + 1
        self.ledger = Ledger()
        # The sets a page or a place reads again and again are made once (this order's lifetime).
        self._blob = functools.lru_cache(maxsize=2_048)(self._blob_made)

    @staticmethod
    def node_id(node_id: int) -> str:
        return f"{ORDER}|{node_id}"

    def _set_range(self, index: int) -> range:
        return range(index * sets.SET_FILL, min((index + 1) * sets.SET_FILL, self.size))

    def _set_info(self, index: int) -> sets.SetInfo:
        members = self._set_range(index)
        last = encoding.separator(record_at(members.stop - 1))
        return sets.SetInfo(
            index + 1, 1, len(members), last, scores_between(members[0], members.stop)
        )

    def read(self, doc_id: str, fields: tuple[str, ...] | None = None) -> sets.Manifest:
        """One node decoded from the fields asked for (None: all of it)."""
        stored = self.documents[doc_id]
        document = stored if fields is None else {f: stored[f] for f in fields if f in stored}
        with self.untimed():
            self.ledger.read.append(bson_size(document))
        return node_decode(document)

    def child(self, node: sets.Manifest, index: int, fields: tuple[str, ...] | None = None):
        return self.read(self.node_id(node.set_id(index)), fields)

    def versions_read(self, set_ids: set[int]) -> None:
        """What one `$in` read of these sets' versions and gone counts returns."""
        with self.untimed():
            self.ledger.read += [bson_size(set_version_document(s)) for s in set_ids]

    def sets_read(self, set_ids: set[int]) -> dict[int, bytes]:
        """{set id: records blob}, as one `$in` read of the sets would return them."""
        with self.untimed():
            blobs = {set_id: self._blob(set_id) for set_id in set_ids}
            self.ledger.read += [bson_size(set_document(s, 1, b)) for s, b in blobs.items()]
        return blobs

    def _blob_made(self, set_id: int) -> bytes:
        return b"".join(map(record_at, self._set_range(set_id - 1)))

    def write(self, document: dict) -> None:
        with self.untimed():
            self.ledger.written.append(bson_size(document))

    @contextlib.contextmanager
    def untimed(self) -> Iterator[None]:
        """Time the bench's own work, to leave it out of the operation's."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.ledger.untimed += time.perf_counter() - started


# --- the operations ------------------------------------------------------------------------------


def page_read(order: Order, offset: int, limit: int = PAGE_SIZE) -> list[bytes]:
    """`limit` records from 0-based `offset`: down the levels by the entries' lengths
    (`Manifest.set_at`), then the one or two sets holding them (and the next leaf, for a page
    that crosses one's end)."""
    root, records = order.read(ORDER, PAGE_FIELDS), []
    while len(records) < limit:
        node, inside = root, offset + len(records)
        while node.level and (found := node.set_at(inside)) is not None:
            index, inside = found
            node = order.child(node, index, NODE_FIELDS)
        if (found := node.set_at(inside)) is None:
            break
        index, inside = found
        wanted = node.sets_covering(index, inside, limit - len(records))
        blobs = order.sets_read({node.set_id(i) for i in wanted})
        got = [r for i in wanted for r in encoding.records_of(blobs[node.set_id(i)])]
        records += got[inside : inside + limit - len(records)]
    return records


def place_read(order: Order, record: bytes) -> int | None:
    """A member's 0-based place: down the levels by separator (`Manifest.set_for`), adding the
    members of the entries before, then one set."""
    node, before = order.read(ORDER, PAGE_FIELDS), 0
    while True:
        index = node.set_for(record)
        if index < 0:
            return None
        before += node.offset_of_set(index)
        if not node.level:
            break
        node = order.child(node, index, NODE_FIELDS)
    set_id = node.set_id(index)
    records = encoding.records_of(order.sets_read({set_id})[set_id])
    position = bisect.bisect_left(records, record)
    if position == len(records) or records[position] != record:
        return None
    return before + position


def histogram_read(order: Order) -> dict[int, int]:
    """The day's histogram, which ranks anybody: the root alone."""
    return order.read(ORDER, HISTOGRAM_FIELDS).histogram


def moves_fold(order: Order, moves: list[moving.Move]) -> sets.Manifest:
    """What a fold reads and writes, as `order_writes.manifests_move` does it on an order no earlier
    try of the fold wrote: the root, the nodes the moves reach a level at a time
    (`tree.nodes_missing`), the versions and gone counts of the sets they reach at the leaves
    (`tree.leaves_reached`), the sets to read whole (`moving.sets_plan`: those taking their
    arrivals in) in one read; then the moves applied at the leaves (`moving.moves_apply`: the
    sets members only leave get a gone list), each changed node's entry recomputed upwards
    (`tree.tree_apply`) and the root settled (`tree.root_settle`). Returns the root as written
    (the order itself stays as built, with no gone lists)."""
    root = order.read(ORDER)
    children: dict[int, sets.Manifest] = {}
    while missing := tree.nodes_missing(root, moves, children):
        children.update({node_id: order.read(order.node_id(node_id)) for node_id in missing})
    leaves = tree.leaves_reached(root, moves, children)
    order.versions_read(
        {set_id for leaf, routed in leaves for set_id in moving.sets_reached(leaf, routed)}
    )
    whole: set[int] = set()
    leaving: set[int] = set()
    for leaf, routed in leaves:
        read, _fold, gone = moving.sets_plan(leaf, routed, {})
        whole |= read
        leaving |= gone
    loaded = order.sets_read(whole)
    trash: list[int] = []

    def leaf_apply(_leaf_id: int, leaf: sets.Manifest, routed: list[moving.Move]) -> None:
        fold = moving.sets_to_fold(leaf, routed)
        rewrite = moving.moves_apply(leaf, loaded, routed, fold & set(loaded), leaving)
        for set_id, (version, blob) in rewrite.written.items():
            order.write(set_document(set_id, version, blob))
        for set_id, (version, records) in rewrite.gone.items():
            order.write(gone_update(set_id, version, records))
        trash.extend(rewrite.dropped)

    rewrite = tree.NodesRewrite()
    if root.level:
        tree.tree_apply(root, moves, children, leaf_apply, rewrite)
    else:
        leaf_apply(0, root, moves)
    tree.root_settle(root, rewrite)
    for node_id, node in rewrite.written.items():
        order.write(node_document(order.node_id(node_id), node))
    root.version += 1
    root.trash = trash + rewrite.dropped  # deleted by the next writer
    order.write(node_document(ORDER, root))
    return root


def solve_moves(order: Order, rng: random.Random, count: int) -> list[moving.Move]:
    """`count` programmers each solving once more: one score up, reached after everybody who has
    that score, so each joins the end of the score's run of members (where solves put them)."""
    moves = []
    with order.untimed():
        late = 2**maths.TIME_BITS - 1 - (REACHED + LATER)
        for n in rng.sample(range(order.size), count):
            key = (SCORE_TOP - _group(n) + 1) << maths.TIME_BITS | late
            moves.append(moving.Move(record_at(n), record_at(n, key=key)))
    return moves


def random_moves(order: Order, rng: random.Random, count: int) -> list[moving.Move]:
    """`count` programmers each leaving their place for one beside another member, at random."""
    moves = []
    with order.untimed():
        for n in rng.sample(range(order.size), count):
            beside = rng.randrange(order.size - 1)
            beside += beside >= n  # never the mover: they would not move
            moves.append(moving.Move(record_at(n), record_at(n, key=key_at(beside))))
    return moves


# --- the bench ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One operation at one size: the levels of nodes (the root's included), the documents and
    bytes of a run (the median run's, for those that vary) and its time."""

    members: int
    operation: str
    levels: int
    reads: int
    read_bytes: int
    writes: int
    written_bytes: int
    median_ms: float
    p95_ms: float


def _operations(order: Order, rng: random.Random) -> dict[str, Callable[[], object]]:
    last = max(order.size - PAGE_SIZE, 0)
    return {
        "page at offset 0": lambda: _page_checked(order, 0),
        "page in the middle": lambda: _page_checked(order, order.size // 2),
        "last page": lambda: _page_checked(order, last),
        "a member's place": lambda: _place_checked(order, rng.randrange(order.size)),
        "histogram (a rank)": lambda: histogram_read(order),
        "one move": lambda: moves_fold(order, random_moves(order, rng, 1)),
        f"fold of {FOLD_MOVES:,} moves": lambda: moves_fold(
            order, random_moves(order, rng, min(FOLD_MOVES, order.size // 2))
        ),
        f"fold of {FOLD_MOVES:,} solves": lambda: moves_fold(
            order, solve_moves(order, rng, min(FOLD_MOVES, order.size // 2))
        ),
    }


def _page_checked(order: Order, offset: int) -> None:
    """A page read, checked against `record_at` (untimed): the order holds what it claims."""
    page = page_read(order, offset)
    with order.untimed():
        if page != [record_at(n) for n in range(offset, min(offset + PAGE_SIZE, order.size))]:
            raise AssertionError(f"the page at {offset} is not members {offset} onwards")


def _place_checked(order: Order, n: int) -> None:
    with order.untimed():
        record = record_at(n)
    if (found := place_read(order, record)) != n:
        raise AssertionError(f"member {n} found at {found}: the order is not what it claims")


def _measure(order: Order, operation: str, run: Callable[[], object], repeat: int) -> Row:
    ledgers, seconds = [], []
    for _ in range(repeat):
        order.ledger = Ledger()
        started = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - started - order.ledger.untimed)
        ledgers.append(order.ledger)
    ledger = sorted(ledgers, key=lambda lg: sum(lg.read) + sum(lg.written))[(repeat - 1) // 2]
    return Row(
        members=order.size,
        operation=operation,
        levels=order.levels,
        reads=len(ledger.read),
        read_bytes=sum(ledger.read),
        writes=len(ledger.written),
        written_bytes=sum(ledger.written),
        median_ms=statistics.median(seconds) * 1000,
        p95_ms=_p95(seconds) * 1000,
    )


def _p95(values: list[float]) -> float:
    return sorted(values)[math.ceil(0.95 * len(values)) - 1]


def structure_bench(sizes: list[int], repeat: int, seed: int = 22) -> list[Row]:
    """For each size: the bulk build (every document it writes, and how long it took), then each
    operation `repeat` times."""
    rows = []
    for size in sizes:
        started = time.perf_counter()
        order = Order(size)
        built = time.perf_counter() - started
        rows.append(_build_row(order, built))
        rng = random.Random(seed)
        for operation, run in _operations(order, rng).items():
            rows.append(_measure(order, operation, run, repeat))
        del order
    return rows


def _build_row(order: Order, seconds: float) -> Row:
    nodes = sum(bson_size(d) for d in order.documents.values())
    return Row(
        members=order.size,
        operation="bulk build (all sets and nodes)",
        levels=order.levels,
        reads=0,
        read_bytes=0,
        writes=len(order.documents) + -(-order.size // sets.SET_FILL),
        written_bytes=nodes + order.sets_bytes,
        median_ms=seconds * 1000,
        p95_ms=seconds * 1000,
    )


def structure_table(rows: list[Row]) -> str:
    """The rows as a Markdown table."""
    lines = [
        "| members | operation | levels | docs read | bytes read | docs written | bytes written"
        " | median ms | p95 ms |",
        "|---:|:---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r.members:,} | {r.operation} | {r.levels} | {r.reads:,} | {r.read_bytes:,}"
        f" | {r.writes:,} | {r.written_bytes:,} | {r.median_ms:,.3f} | {r.p95_ms:,.3f} |"
        for r in rows
    ]
    return "\n".join(lines) + "\n"

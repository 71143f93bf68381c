"""An order of made-up members as the store would hold it, and what reading it costs.

The root's and the nodes' documents are built with `tree.tree_build` over manifest entries
computed arithmetically from `members`; a set's records are made from `record_at` only when an
operation reads it. Every read and write is noted in the order's `Ledger` (its bytes), and the
bench's own work is timed apart (`untimed`), to be left out of the operation's time.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from solutions.leaderboard import encoding, sets, tree

from .documents import (
    ORDER,
    bson_size,
    node_decode,
    node_document,
    set_document,
    set_version_document,
)
from .members import MEMBERS_MAX, record_at, scores_between


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

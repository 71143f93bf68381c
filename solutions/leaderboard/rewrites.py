"""How a batch writes back the sets it changed: never over a set's document.

**A set's document is never written over.** A set written anew is a new document under a new id,
and the manifest lists it in place of the old one, deleted once nothing lists it; only a gone
list is added to a set in place, at the version the writer checked. So whatever an applier that
outlived its lease writes from what it read before the holder's folds is a document nothing
lists, or a gone list its version check refuses. Each changed set's manifest entry is made here
(`moving` decides which sets change): a set rewritten under a new id, split in new sets past
sets.SET_MAX (cut only where the separators differ), dropped when empty, or left by a gone list.

Pure, like `sets`: `orders` reads and `order_writes` writes what it changes.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field

from . import sets
from .encoding import separator
from .sets import Manifest, SetInfo

# A set's or node's id carries the day whose order wrote it (its **birth day**) above BORN_SHIFT
# random bits: the day's orders share the documents of the day before until they change them
# (see `orders`), so a document's name must not depend on the order reading it, and the days
# before the history kept are pruned by that day alone.
BORN_SHIFT = 46


def new_set_id(born: int) -> int:
    """A set's (or node's) id born on day `born` (0 for an all-time order): random below the
    day, so two writers can never pick the same one."""
    return born << BORN_SHIFT | secrets.randbits(BORN_SHIFT)


def born_of(set_id: int) -> int:
    """The day whose order wrote the set or node with this id (see `new_set_id`)."""
    return set_id >> BORN_SHIFT


@dataclass
class Rewrite:
    """What a batch of moves changed: {set id: (version, records blob)} to write (each a new
    document), {set id: (version, records)} to list as gone beside a set's records, and set ids
    the manifest no longer lists."""

    written: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    gone: dict[int, tuple[int, list[bytes]]] = field(default_factory=dict)
    dropped: list[int] = field(default_factory=list)


def entries_waiting(
    rewrite: Rewrite,
    manifest: Manifest,
    info: SetInfo,
    records: list[bytes] | None,
    scores: dict[int, int],
    waiting: list[bytes],
) -> list[SetInfo]:
    """The entry of a set whose document stays as it is (`records` None) or as its records left
    it (empty, its members all waiting): it counts the set's arrivals, and its last member may be
    one of them."""
    if not scores:
        return entries_dropped(rewrite, info)
    set_id, version = info.set_id, info.version
    if records is not None:  # written empty, its members all waiting
        set_id, version = _renamed(rewrite, manifest, info), version + 1
        rewrite.written[set_id] = (version, b"")
    lasts = [info.last if records is None else b"", *map(separator, waiting[-1:])]
    return [SetInfo(set_id, version, sum(scores.values()), max(lasts), scores)]


def _renamed(rewrite: Rewrite, manifest: Manifest, info: SetInfo) -> int:
    """A new id for a set written anew, its arrivals still waiting moved to it: a set's document
    is never written over, so that an applier that outlived its lease, writing what it read
    before the holder's folds, can only ever make documents that nothing lists. The old one is
    deleted once the manifest no longer lists it."""
    set_id = new_set_id(manifest.born)
    entries_dropped(rewrite, info)
    for record in manifest.arrivals_of(info.set_id):
        manifest.arrivals[record] = set_id
    return set_id


def entries_gone(
    rewrite: Rewrite,
    info: SetInfo,
    gone: list[bytes],
    scores: dict[int, int],
    waiting: list[bytes],
) -> list[SetInfo]:
    """The entry of a set that members left without it being read: a new version, and the
    records to list as gone beside its own (its last member stays an upper bound of what it
    holds, as the separators need)."""
    version = info.version + 1
    rewrite.gone[info.set_id] = (version, sorted(gone))
    last = max([info.last, *map(separator, waiting[-1:])])
    return [SetInfo(info.set_id, version, sum(scores.values()), last, scores)]


def entries_dropped(rewrite: Rewrite, info: SetInfo) -> list[SetInfo]:
    """No entry for an empty set, whose document (if it was ever stored) is deleted."""
    if info.version:
        rewrite.dropped.append(info.set_id)
    return []


def entries_rewritten(
    rewrite: Rewrite,
    manifest: Manifest,
    info: SetInfo,
    records: list[bytes],
    scores: dict[int, int],
    waiting: list[bytes],
) -> list[SetInfo]:
    """The entry of a set written anew (under a new id), counting the arrivals still waiting."""
    version = info.version + 1
    set_id = _renamed(rewrite, manifest, info)
    rewrite.written[set_id] = (version, b"".join(records))
    last = max([separator(records[-1]), *map(separator, waiting[-1:])])
    return [SetInfo(set_id, version, len(records) + len(waiting), last, scores)]


def entries_split(
    rewrite: Rewrite, manifest: Manifest, info: SetInfo, records: list[bytes]
) -> list[SetInfo]:
    """The entries of a full set split into sets of their own, leaving the full one as it was
    until the manifest stops listing it: a writer stopped halfway loses nothing. (Only a set
    taking its arrivals in grows, so none are left waiting for it.)"""
    parts = [SetInfo.of(new_set_id(manifest.born), 1, part) for part in _split(records)]
    for part, part_records in zip(parts, _split(records), strict=True):
        rewrite.written[part.set_id] = (1, b"".join(part_records))
    entries_dropped(rewrite, info)
    return parts


def _split(records: list[bytes]) -> Iterator[list[bytes]]:
    """Equal parts of at most sets.SET_MAX members (nothing for an empty set), each cut where the
    separators differ (`_cut`)."""
    parts = -(-len(records) // sets.SET_MAX)
    size = -(-len(records) // max(parts, 1))
    start = 0
    while start < len(records):
        end = _cut(records, start, start + size)
        yield records[start:end]
        start = end


def _cut(records: list[bytes], start: int, wanted: int) -> int:
    """Where to end a set that starts at `start`: at `wanted` or the nearest place after it
    (else before it) whose two members have different separators, so a bisect on separators
    finds every member's set; the end of the records when there is none."""
    if wanted >= len(records):
        return len(records)
    for end in itertools.chain(range(wanted, len(records)), range(wanted - 1, start, -1)):
        if separator(records[end - 1]) != separator(records[end]):
            return end
    return len(records)

"""A manifest of manifests: the order of a board day read and written in bounded pieces at any size.

A manifest (`sets`) lists a board day's sets with their lengths, last members and score counts.
At a million programmers that is some two thousand sets, 80 KB that every page read and every
fold would move, and 2 MB at 25 million. So an order is a tree of manifests, the second level of
"Massive Distributed Sorted Sets" (shared/seeds/004, solution 2a), kept the way a B+-tree is:

- every **node** is a `sets.Manifest` of at most NODE_MAX entries. A node of `level` 0 lists sets
  of members; a node of level n lists nodes of level n - 1, each entry giving a node exactly what
  an entry gives a set: its id, its version, its number of members, the separator of its last
  member, and its score counts (the node's histogram);
- the **root** is stored under the order's id. It keeps the day's histogram (the sum of its
  entries' score counts), so a rank is still the root alone. Only an order small enough to keep
  its one set inside the root (see `orders.INLINE_MAX`) is a root of level 0, a manifest alone:
  any other lists its sets through at least one level of nodes (`root_grow`), so that a read
  costs the same documents from one set to 128² (4 to 16 million members), not one more the day
  an order passes NODE_MAX sets;
- a node that grows past NODE_MAX entries is cut into nodes of about NODE_FILL (`nodes_split`),
  and a root that does moves its entries into new nodes and lists those one level up
  (`root_grow`). Levels grow with the logarithm of the board: three hold 128³ sets, a billion
  members, so a read costs one manifest of at most NODE_MAX entries a level and one set.

**Readers** descend from the root: a page by offsets (`Manifest.set_at`), a place by separator
(`Manifest.set_for`), each node with the journal's pairs that fall in it laid over it
(`pairs_route`, `Manifest.journal_lay`), so lengths stay right at every level.

**Writers** route moves down the same way (`moves_route`), apply them at the nodes of level 0
(`order_writes`' `leaf_apply`: `moving.moves_apply` with its repairs and writes), then recompute
each changed node's entry from the node (`node_entry`), bottom up (`tree_apply`). Only the nodes
the moves reach are read and written. Like a set (see `rewrites`), a node is never written over: a
node changed is written as a new node under a new id, and the old one, like a node that is cut,
is left as it was until its parent stops listing it (its id goes to the root's trash). So a
writer stopped anywhere, or one that outlived its lease, leaves only nodes that nothing lists
until the root is swapped. Every node carries a version that its parent's entry repeats; a
mismatch, which only nodes written over by earlier code can show, is recomputed from the node
(`nodes_repair`), as a manifest does for its sets.

**How large a document gets.** A histogram holds at most `sets.HISTOGRAM_MAX` (4,096) buckets,
coarser ones past that many distinct scores (see `sets.Manifest`). So the root and a node of
level 1 or more hold at most 32 KB of histogram, 33 KB of their entries' score counts (4,096 +
NODE_MAX - 1 pairs: neighbouring entries share at most a bucket) and 4 KB of other columns, with
the arrivals (3 KB) under 75 KB at any number of members or distinct scores (50 KB measured for
200,000 distinct scores); a node of level 0 keeps its sets' exact counts, at most NODE_MAX sets
of SET_MAX scores: 1.1 MB; a set 53 KB and its gone list. A rank reads the root's histogram
alone (32 KB at most), and a reader below the root asks a node for neither its histogram nor
its score counts (`order_documents.NODE`).

This module is pure, like `sets`: `order_writes` writes the nodes and `reading` reads them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .moving import Move
from .rewrites import new_set_id
from .sets import Manifest, SetInfo

NODE_MAX = 128  # entries of a manifest before it is cut in nodes
NODE_FILL = NODE_MAX // 2  # entries of the nodes a cut makes, so moves rarely cut them again

Pair = tuple[bytes | None, bytes | None]


@dataclass
class NodesRewrite:
    """What applying moves did to the nodes below a root: {node id: node} to write (each a new
    document, see above), and the ids of nodes no longer listed."""

    written: dict[int, Manifest] = field(default_factory=dict)
    dropped: list[int] = field(default_factory=list)


def node_entry(node_id: int, node: Manifest) -> SetInfo:
    """A non-empty node as its parent lists it, all of it computed from the node."""
    last = node.last(len(node) - 1)
    return SetInfo(node_id, node.version, node.total, last, node.histogram, node.shift)


def nodes_split(node: Manifest) -> list[Manifest]:
    """A node's entries cut into nodes of about NODE_FILL each (version 1, at its level); the
    first takes the node's trash, for its next writer to delete."""
    count = -(-len(node) // NODE_FILL)
    size = -(-len(node) // count)
    parts = [node.cut(start, min(start + size, len(node))) for start in range(0, len(node), size)]
    for part in parts:
        part.version = 1
    parts[0].trash = list(node.trash)
    return parts


def _nodes_made(parts: list[Manifest], rewrite: NodesRewrite) -> list[SetInfo]:
    """The entries of nodes written under new ids, born on the day of the order writing them."""
    entries = []
    for part in parts:
        node_id = new_set_id(part.born)
        rewrite.written[node_id] = part
        entries.append(node_entry(node_id, part))
    return entries


def root_grow(root: Manifest, rewrite: NodesRewrite) -> None:
    """Move the entries of a root that outgrew NODE_MAX into new nodes, listed one level up,
    until it holds at most NODE_MAX (a bulk build may need several levels at once); a root of
    level 0 whose sets are stored outside it moves them into a node at once (see above)."""
    while len(root) > NODE_MAX or (root.level == 0 and len(root) and not root.inline):
        root.relist(root.level + 1, _nodes_made(nodes_split(root), rewrite))


def tree_build(root: Manifest) -> dict[int, Manifest]:
    """The nodes of an order built in bulk (`moving.sets_build` made `root`, changed in place)."""
    rewrite = NodesRewrite()
    root_grow(root, rewrite)
    return rewrite.written


def moves_route(node: Manifest, moves: Iterable[Move]) -> dict[int, list[Move]]:
    """{index of an entry of the node: the moves below it}: each member leaves where the node's
    separators place its old record and joins where they place its new one."""
    routed: dict[int, list[Move]] = defaultdict(list)
    for move in moves:
        if move.old is not None and len(node):
            routed[node.set_for(move.old)].append(Move(move.old, None))
        if move.new is not None:
            routed[max(node.set_for(move.new), 0)].append(Move(None, move.new))
    return routed


def pairs_route(node: Manifest, index: int, pairs: Iterable[Pair]) -> list[Pair]:
    """The halves of a journal's (gone, came) pairs that fall below entry `index` of a node whose
    separators were read, for a reader to lay over that entry's node."""
    routed = []
    for gone, came in pairs:
        gone = gone if gone is not None and node.set_for(gone) == index else None
        came = came if came is not None and node.set_for(came) == index else None
        if gone is not None or came is not None:
            routed.append((gone, came))
    return routed


def nodes_repair(node: Manifest, children: dict[int, Manifest]) -> None:
    """Recompute the entries of children whose version differs from the one the node lists (a
    writer stopped between writing a child and the node)."""
    for child_id, child in children.items():
        index = node.index_of(child_id)
        if index is not None and child.version != node.set_version(index) and len(child):
            node.splice(index, 1, [node_entry(child_id, child)])


def tree_apply(
    node: Manifest,
    moves: list[Move],
    children: dict[int, Manifest],
    leaf_apply: Callable[[int, Manifest, list[Move]], None],
    rewrite: NodesRewrite,
) -> None:
    """Apply moves below a node of level 1 or more, in place: at the nodes of level 0 by
    `leaf_apply(node id, node, moves)`, then each child's entry again from the child (a new
    version; cut when it outgrew NODE_MAX; gone when empty), last first so indexes hold.
    `children`: every node the moves reach, read with all their columns."""
    nodes_repair(node, {c: children[c] for c in node.set_ids() if c in children})
    for index, routed in sorted(moves_route(node, moves).items(), reverse=True):
        child_id = node.set_id(index)
        child = children[child_id]
        if child.level == 0:
            leaf_apply(child_id, child, routed)
        else:
            tree_apply(child, routed, children, leaf_apply, rewrite)
        node.splice(index, 1, _child_entries(child_id, child, rewrite))


def _child_entries(child_id: int, child: Manifest, rewrite: NodesRewrite) -> list[SetInfo]:
    """The entries that list a child after its moves: none when it emptied, the child under a
    new id (a new version), or the nodes it was cut into. The child's own document stays as it
    was until nobody lists it: nodes, like sets, are never written over (see `rewrites`)."""
    rewrite.dropped.append(child_id)
    if not len(child):
        return []
    if len(child) > NODE_MAX:
        return _nodes_made(nodes_split(child), rewrite)
    child.version += 1
    return _nodes_made([child], rewrite)


def root_settle(root: Manifest, rewrite: NodesRewrite) -> None:
    """After moves: a root that outgrew NODE_MAX grows a level; one left with no entries is an
    empty manifest of level 0 again (its nodes were dropped), ready for the next member."""
    if root.level and not len(root):
        root.relist(0, [])
    root_grow(root, rewrite)


def nodes_missing(root: Manifest, moves: list[Move], children: dict[int, Manifest]) -> set[int]:
    """The ids of the nodes that the moves reach and `children` does not hold yet, the nodes it
    holds repaired on the way (a repair can change where a move goes): a writer reads them and
    asks again, one level more each time, until none is missing."""
    missing: set[int] = set()

    def walk(node: Manifest, routed_moves: list[Move]) -> None:
        if node.level == 0:
            return
        nodes_repair(node, {c: children[c] for c in node.set_ids() if c in children})
        for index, routed in moves_route(node, routed_moves).items():
            child_id = node.set_id(index)
            if child_id in children:
                walk(children[child_id], routed)
            else:
                missing.add(child_id)

    walk(root, moves)
    return missing


def leaves_reached(
    root: Manifest, moves: list[Move], children: dict[int, Manifest]
) -> list[tuple[Manifest, list[Move]]]:
    """The nodes of level 0 the moves reach (the root itself when it is one), each with its
    share of the moves: whose sets a writer reads before `tree_apply`."""
    if root.level == 0:
        return [(root, moves)]
    reached = []
    for index, routed in moves_route(root, moves).items():
        reached += leaves_reached(children[root.set_id(index)], routed, children)
    return reached

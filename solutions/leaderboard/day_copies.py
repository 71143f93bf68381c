"""A new day's orders as copies of the day before's (`day_change`): each order of day d-1 with
somebody on it (everybody's, and each group's, found in d-1's ranklists of groups) gets a root on
d that is a copy of its root on d-1: it lists the same nodes and sets, which both days share
until either changes them (see `orders`). The ranklists are copied whole instead, as a group's
record can stay the same for months and shared documents are pruned by age.

A copy is of the roots alone, without the journal's parts: what the orders held when the
day's preparation began, when the journal was folded. d-1's roots change only when a fold
writes them, and a fold of a board whose tomorrow is begun and not copied first copies what it
is about to change (`copies_before_fold`): the ranklists, and the roots of the orders it moves.
So every copy is of d-1 as it was when the preparation began, whoever makes it and whenever:
the pass, off the lease, copies the rest, reading the groups to copy from d's ranklists, never
from d-1's, which a fold may have changed meanwhile. Copying again changes nothing: a root or a
ranklist copied already is left as it is, and a ranklist with nobody on it is copied as an
empty one, so that a fold cannot make it look not copied.
"""

from __future__ import annotations

from collections.abc import Iterable

from bson import Binary
from pymongo import InsertOne
from pymongo.errors import BulkWriteError

from .. import mongo
from . import encoding, groups, moving, order_writes, orders, reading


def copy_due(journal: dict) -> int | None:
    """The day whose copies a board's journal says are still to make: its preparation begun
    and not copied (`day_change.day_begin`), else None."""
    prep = journal.get("prep") or {}
    return prep["day"] if "id" in prep and not prep.get("copied") else None


def orders_copy(board_slug: str, day: int) -> None:
    """Day `day`'s roots as copies of the day before's, for every order with somebody on it, and
    its ranklists of groups copied whole, as the roots hold them (the journal's parts not laid:
    see the module docstring). Again changes nothing."""
    scopes = [""]
    for kind in groups.KINDS:
        ranklist = groups.ranklist_scope(kind)
        listed = _ranklist_copy(board_slug, day, ranklist)
        if listed is None:  # copied before (a fold, another try): read as it was copied
            listed = _ranklist_records(board_slug, day, ranklist)
        scopes += _group_names(listed)
    for start in range(0, len(scopes), 1_000):
        _roots_copy(board_slug, day, scopes[start : start + 1_000])


def copies_before_fold(board_slug: str, day: int, scopes: Iterable[str]) -> None:
    """What a fold copies of day `day - 1` before it changes the orders of these scopes there,
    while day `day` is begun and not copied: the ranklists (which the pass reads the groups to
    copy from) and the roots of these orders, so that the copies stay what the day before held
    when the preparation began. Bounded by what the fold moves, not by the board's groups."""
    for kind in groups.KINDS:
        _ranklist_copy(board_slug, day, groups.ranklist_scope(kind))
    _roots_copy(board_slug, day, [scope for scope in scopes if not groups.is_ranklist(scope)])


def _group_names(listed: list[bytes]) -> list[str]:
    """The scopes of the groups a ranklist's records list."""
    ids = [encoding.record_programmer(record) for record in listed]  # a group's id
    names = orders.group_names_read(ids)
    return [names[group] for group in ids if group in names]


def _roots_copy(board_slug: str, day: int, scopes: list[str]) -> None:
    """The roots of these scopes on `day` as copies of the day before's: each lists the same
    nodes and sets, which the two days then share until either changes them (see `orders`). A
    root that exists already (a preparation stopped midway and done again) is left as it is,
    and an empty order needs none (an order with no root is empty)."""
    wanted = {orders.order_id(board_slug, str(day - 1), scope): scope for scope in scopes}
    copies = []
    for document in mongo.find_by_ids(orders.orders(), list(wanted)):
        if document.get("hist"):
            copy = {
                **document,
                "_id": orders.order_id(board_slug, str(day), wanted[document["_id"]]),
            }
            copies.append(InsertOne(copy | {"v": 1, "folded": -1, "trash": Binary(b"")}))
    if copies:
        try:
            orders.orders().bulk_write(copies, ordered=False)
        except BulkWriteError as error:
            mongo.raise_unless_duplicates(error)  # copied already by a try before


def _ranklist_copy(board_slug: str, day: int, ranklist: str) -> list[bytes] | None:
    """A ranklist of `day` with the day before's records, in documents of its own, empty if the
    day before's is; returns the records, or None when it was copied already or meanwhile.
    Records this copy wrote are the day before's as it began: a fold changes that ranklist only
    after copying it (`copies_before_fold`), and then this copy finds it, or meets it."""
    order = orders.order_id(board_slug, str(day), ranklist)
    if orders.root_exists(order):
        return None
    records = _ranklist_records(board_slug, day - 1, ranklist)
    try:
        order_writes.orders_write({order: moving.sets_build(records, born=day)})
    except BulkWriteError as error:
        mongo.raise_unless_duplicates(error)  # written meanwhile by another copier
        return None
    return records


def _ranklist_records(board_slug: str, day: int, ranklist: str) -> list[bytes]:
    """A day's ranklist as its roots hold it, the journal's parts not laid."""
    return list(reading.records_in_order(board_slug, str(day), ranklist, laid=(0, [])))

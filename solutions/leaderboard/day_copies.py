"""A new day's orders as copies of the day before's (`day_change`): each order of day d-1 with
somebody on it (everybody's, and each group's, found in d-1's ranklists of groups) gets a root on
d that is a copy of its root on d-1: it lists the same nodes and sets, which both days share
until either changes them (see `orders`). The ranklists are copied whole instead, as a group's
record can stay the same for months and shared documents are pruned by age.

A copy is of the roots alone, without the journal's parts: what the orders held when the
day's preparation began, when the journal was folded. d-1's roots change only when a fold
writes them, and a fold of a board whose tomorrow is begun and not copied copies it first
(`folds.journals_fold`), so the copy is the same whenever it is made: by the pass, off the
lease, or by a fold that comes first. Copying again changes nothing (a root copied already is
left, and a ranklist is written only where none is).
"""

from __future__ import annotations

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
    before = str(day - 1)
    scopes = [""]
    for kind in groups.KINDS:
        ranklist = groups.ranklist_scope(kind)
        listed = list(reading.records_in_order(board_slug, before, ranklist, laid=(0, [])))
        ids = [encoding.record_programmer(record) for record in listed]  # a group's id
        names = orders.group_names_read(ids)
        scopes += [names[group] for group in ids if group in names]
        _ranklist_copy(board_slug, day, ranklist, listed)
    for start in range(0, len(scopes), 1_000):
        _roots_copy(board_slug, day, scopes[start : start + 1_000])


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


def _ranklist_copy(board_slug: str, day: int, ranklist: str, records: list[bytes]) -> None:
    """A ranklist of `day` with the day before's records, in documents of its own (unless a
    preparation stopped midway made it already)."""
    order = orders.order_id(board_slug, str(day), ranklist)
    if records and not orders.root_exists(order):
        try:
            order_writes.orders_write({order: moving.sets_build(records, born=day)})
        except BulkWriteError as error:
            mongo.raise_unless_duplicates(error)  # written meanwhile by another copier

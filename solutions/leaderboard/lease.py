"""The applier's lease: who may move the orders now, and who is pending (the `appliers` document).

One document holds the lease (`token`, `until`) and the pending list ("board|id|tag" items).
Every time is the **server's**: `until` is milliseconds of the server's clock (`$$NOW`), taken,
compared and renewed in the update that reads it, so a web machine whose clock is off changes
nothing. (Stored as a number: SecantusDB compares a stored date with `$$NOW` wrongly.)

The lease is short (`LEASE_SECONDS`) and its holder renews it as it works (`keep`, before each
long step), so a holder that dies is replaced within a few seconds; a holder that finds its
lease taken stops with everybody still pending (`orders.OrdersConflict`).

Each board also has a **preparer's lease** (``prep|<board>``, timed and renewed the same way):
whoever does the pass of the board's tomorrow off the applier's lease holds it, so that two
runs of the prepare task do not do the same pass at once (`day_change.days_pass`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from pymongo import ReturnDocument, UpdateOne
from pymongo.collection import Collection
from pymongo.errors import DuplicateKeyError

from .. import mongo
from .orders import OrdersConflict

LEASE_SECONDS = 3.0  # a dead holder stalls the solves this long at most
RENEW_SECONDS = 1.0  # a holder renews when it took its lease or renewed it this long ago
LEASE = "orders"  # the one applier document: every solve moves orders of every board

_SERVER_NOW = {"$toLong": "$$NOW"}
_FREE = {"$not": [{"$gt": [{"$ifNull": ["$until", 0]}, _SERVER_NOW]}]}
_UNTIL = {"$add": [_SERVER_NOW, int(LEASE_SECONDS * 1000)]}


def appliers() -> Collection:
    return mongo.get_db()["appliers"]


def item(board_slug: str, programmer_id: int, tag: str) -> str:
    """A pending entry, "board|id|tag": a programmer on a board, tagged by whoever listed them
    (so one request's listing is never mistaken for another's)."""
    return f"{board_slug}|{programmer_id}|{tag}"


def item_parts(pending: str) -> tuple[str, int, str]:
    """(board slug, programmer id, tag) of a pending entry made by `item`."""
    board_slug, programmer_id, tag = pending.split("|")
    return board_slug, int(programmer_id), tag


def _update(update: dict) -> None:
    """Change the applier document, made on first use. Two first uses at once can both try to
    make it: the loser's update is simply applied again (each is idempotent)."""
    try:
        appliers().update_one({"_id": LEASE}, update, upsert=True)
    except DuplicateKeyError:
        appliers().update_one({"_id": LEASE}, update)


def pending_add(items: list[str]) -> None:
    if items:
        _update({"$addToSet": {"pending": {"$each": items}}})


def pending_clear(board_slug: str) -> None:
    """Forget the programmers pending on a board (its orders were just rebuilt from scratch)."""
    _update({"$pull": {"pending": {"$regex": f"^{board_slug}\\|"}}})


def take(token: str, listed: list[str]) -> tuple[bool, list[str]]:
    """List `listed` as pending and take the lease if it is free (or ran out), in one write:
    (whether this request now holds the lease, everything pending). A holder that stops midway
    leaves what it listed to the next one; a request that finds the lease held is listed for
    the holder's next batch by the same write."""
    update = {
        "token": {"$cond": [_FREE, token, "$token"]},
        "until": {"$cond": [_FREE, _UNTIL, "$until"]},
        "pending": {"$setUnion": [{"$ifNull": ["$pending", []]}, listed]},
    }
    document = None
    for _attempt in range(2):  # two first uses at once: the loser's write goes again
        try:
            document = appliers().find_one_and_update(
                {"_id": LEASE},
                [{"$set": update}],
                projection={"pending": 1, "token": 1},
                upsert=True,
                return_document=ReturnDocument.AFTER,
            )
            break
        except DuplicateKeyError:
            continue
    if document is None:
        # Under concurrent writers SecantusDB 0.7 can answer "nothing matched" to a
        # findAndModify that did its write: look, and list them if it did not.
        document = appliers().find_one({"_id": LEASE}, {"pending": 1, "token": 1}) or {}
        if document.get("token") != token and not set(listed) <= set(document.get("pending", [])):
            pending_add(listed)
    held = document.get("token") == token
    if held:
        _held.name, _held.token, _held.renewed = LEASE, token, time.monotonic()
    return held, list(document.get("pending", []))


def _preparer(board_slug: str) -> str:
    return f"prep|{board_slug}"


def preparer_take(board_slug: str, token: str) -> bool:
    """Take the lease of a board's next day's pass (`day_change.days_pass`, off the applier's
    lease: a document of its own, ``prep|<board>``) if it is free; whether this holds it now.
    Renewed by `keep` like the applier's."""
    update = {
        "token": {"$cond": [_FREE, token, "$token"]},
        "until": {"$cond": [_FREE, _UNTIL, "$until"]},
    }
    name, document = _preparer(board_slug), None
    for _attempt in range(2):  # two first uses at once: the loser's write goes again
        try:
            document = appliers().find_one_and_update(
                {"_id": name},
                [{"$set": update}],
                projection={"token": 1},
                upsert=True,
                return_document=ReturnDocument.AFTER,
            )
            break
        except DuplicateKeyError:
            continue
    if document is None:  # SecantusDB's "nothing matched" after its write (see `take`)
        document = appliers().find_one({"_id": name}, {"token": 1}) or {}
    held = document.get("token") == token
    if held:
        _held.name, _held.token, _held.renewed = name, token, time.monotonic()
    return held


def preparer_release(board_slug: str, token: str) -> None:
    """Give a board's preparer lease back (if this still holds it)."""
    _held.token = None
    appliers().update_one({"_id": _preparer(board_slug), "token": token}, {"$set": {"until": None}})


def release(token: str, done: list[str] | None) -> None:
    """Give the lease back; `done`: what was moved (None: nothing, the batch failed), pulled
    from the pending entries."""
    appliers().update_one(*_release(token, done))


def release_write(token: str, done: list[str]) -> UpdateOne:
    """The lease given back, as the last write of a batch sent with its others (`applier`)."""
    return UpdateOne(*_release(token, done), namespace=mongo.namespace(appliers()))


def _release(token: str, done: list[str] | None) -> tuple[dict, dict]:
    _held.token = None
    update: dict = {"$set": {"until": None}}
    if done:
        update["$pullAll"] = {"pending": done}
    return {"_id": LEASE, "token": token}, update


@contextlib.contextmanager
def taken_for_a_step(token: str, wait: float) -> Iterator[bool]:
    """The applier's lease, taken for one short step by the holder of another (a board's
    preparer begins a round of its pass: `day_change`), waiting up to `wait` seconds for it to
    be free, and given back after it; the lease held before is renewed by `keep` again then.
    Yields whether it was taken (listing nobody as pending)."""
    before = [getattr(_held, field, None) for field in ("name", "token", "renewed")]
    deadline = time.monotonic() + wait
    held, _pending = take(token, [])
    while not held and time.monotonic() < deadline:
        time.sleep(0.025)  # a waiter of the applier looks every 15 to 50 ms
        held, _pending = take(token, [])
    try:
        yield held
    except BaseException:
        if held:
            mongo.cleanup(lambda: release(token, None))
        raise
    else:
        if held:
            release(token, None)
    finally:
        _held.name, _held.token, _held.renewed = before


def pending_now() -> tuple[set[str], bool]:
    """(everything pending, whether the lease is free now, by the server's clock): one read."""
    found = list(
        appliers().aggregate(
            [{"$match": {"_id": LEASE}}, {"$project": {"pending": 1, "free": _FREE}}]
        )
    )
    document = found[0] if found else {}
    return set(document.get("pending", [])), document.get("free", True)


# The lease this thread holds, for `keep`: its document, its token and when it was last taken or
# renewed.
_held = threading.local()


def keep() -> None:
    """Renew this thread's lease if it was taken or renewed RENEW_SECONDS ago (a batch that takes
    less renews nothing): called before each long step of a batch, a fold or a day's
    preparation. A lease that ran out and was taken by another holder is lost: the step is not
    taken (`OrdersConflict`, everybody stays pending)."""
    token = getattr(_held, "token", None)
    if token is None or time.monotonic() - _held.renewed < RENEW_SECONDS:
        return
    # Still its token: nobody took it, even if it ran out meanwhile.
    held = {"_id": getattr(_held, "name", LEASE), "token": token}
    renewed = appliers().update_one(held, [{"$set": {"until": _UNTIL}}])
    if renewed.matched_count != 1:
        _held.token = None
        raise OrdersConflict("the lease ran out and another holder took it")
    _held.renewed = time.monotonic()

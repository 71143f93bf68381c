"""Idempotency keys for API writes: the same request id always gets the first answer.

A judge retries when it does not hear back, so every write carries an id. The key is claimed
*before* the work by inserting it with a unique ``_id`` into ``requests``: of two racing requests
with one id exactly one wins the insert and does the work; the other finds the key and either
replays the stored answer, or (while the first is still running) is told to retry. A body that
differs from the first one under the same id is a client bug, answered 409.

If the work fails the claim is released, so nothing of a refused request stays behind and a
retry starts afresh. After a storage fault the release usually fails too (the server is out of
reach): the claim then stays until it is stale, and the retry takes it over.

The answer is stored journaled on a majority (``w: "majority", j: true``, `mongo.DURABLE`, as
every write of the site is) before it is given: a server's journal is written in order, so once
the answer is on disk so is every write it stands for (the solve, its counts, the orders), and a
server killed, or a primary lost, right after we answer loses none of it. The database
`mongo.get_db` gives writes so already; the answer's write names it too, as the one the whole
request rests on.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from django.utils import timezone
from pymongo.collection import Collection
from pymongo.errors import DuplicateKeyError

from . import mongo

# A claim older than this whose answer never came belongs to a request that failed without
# releasing it (a storage fault) or died midway: a retry takes it over. Taking over a request
# that is in fact still running is safe, as the work is idempotent by the key (a solve is logged
# once and counted once per board); the wait only spares the storage a second run of a request
# that a client retries too early. A judge retrying after a 503 (Retry-After: 5) waits about this.
STALE_CLAIM = dt.timedelta(seconds=10)
PENDING = "pending"
DONE = "done"
JOURNALED = mongo.DURABLE  # what every write of the site is: majority, journaled


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict
    replayed: bool = False


class KeyReused(Exception):
    """The id was used before with a different body."""


class KeyInFlight(Exception):
    """The first request with this id is still being answered."""


def fingerprint(body: dict) -> str:
    """A hash of a JSON body that ignores key order and spacing. "surrogatepass" keeps a string
    holding a lone surrogate hashable (the API refuses those before this), and gives every other
    body the same hash as plain UTF-8, so stored keys keep matching."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def request_answer(*, key: str, body_hash: str, work: Callable[[], Answer]) -> Answer:
    """The answer to the request `key`: the stored first one, or `work()` run exactly once."""
    with mongo.one_server_life():
        return _request_answer(key=key, body_hash=body_hash, work=work)


def _request_answer(*, key: str, body_hash: str, work: Callable[[], Answer]) -> Answer:
    # Taken before the work: the release after a failure goes through this collection even when
    # the server restarted meanwhile (`mongo.requests()` would refuse a new life of it).
    requests = mongo.requests()
    first = _claim(requests, key=key, body_hash=body_hash)
    if first is not None:
        return first
    try:
        answer = work()
    except BaseException:
        mongo.cleanup(lambda: requests.delete_one({"_id": key, "state": PENDING}))
        raise
    mongo.requests().with_options(write_concern=JOURNALED).update_one(
        {"_id": key},
        {
            "$set": {
                "state": DONE,
                "status": answer.status,
                "answer": answer.body,
                "answered_at": timezone.now(),
            }
        },
    )
    return answer


def _claim(requests: Collection, *, key: str, body_hash: str) -> Answer | None:
    """Claim `key` for this request (None), or the first request's stored answer to replay:
    a new key is inserted, a stale claim taken over; a key still in flight or used with another
    body raises. Claims are timed by the server's clock (`$$NOW`), so a web machine whose clock
    is off neither takes over a claim in flight nor waits on a dead one."""
    while True:
        if _claim_insert(requests, key=key, body_hash=body_hash):
            return None
        first = requests.find_one({"_id": key})
        if first is None:  # released between our write and our read: try again
            continue
        if first["body_hash"] != body_hash:
            raise KeyReused(key)
        if first["state"] == DONE:
            return Answer(status=first["status"], body=first["answer"], replayed=True)
        if _stale_claim_take_over(requests, key=key, claimed_at=first["claimed_at"]):
            return None
        if requests.find_one({"_id": key, "claimed_at": first["claimed_at"], "state": PENDING}):
            raise KeyInFlight(key)  # claimed less than STALE_CLAIM ago


def _claim_insert(requests: Collection, *, key: str, body_hash: str) -> bool:
    """Whether this request inserted the claim of a new `key`. One pipeline update with upsert:
    it changes nothing of a key claimed before, so the first body's hash and time stay."""
    try:
        claimed = requests.update_one(
            {"_id": key},
            [
                {
                    "$set": {
                        "claimed_at": {"$ifNull": ["$claimed_at", "$$NOW"]},
                        "body_hash": {"$ifNull": ["$body_hash", {"$literal": body_hash}]},
                        "state": {"$ifNull": ["$state", PENDING]},
                    }
                }
            ],
            upsert=True,
        )
    except DuplicateKeyError:
        return False  # claimed by another request at the same moment
    return claimed.upserted_id is not None


def _stale_claim_take_over(requests: Collection, *, key: str, claimed_at: dt.datetime) -> bool:
    """Whether this request took over the pending claim of `key` made at `claimed_at`, older
    than STALE_CLAIM by the server's clock (the time compared so that of two requests taking
    it over at once only one does)."""
    stale_ms = int(STALE_CLAIM.total_seconds() * 1000)
    server_now = {"$toLong": "$$NOW"}
    taken = requests.update_one(
        {
            "_id": key,
            "state": PENDING,
            "claimed_at": claimed_at,
            "$expr": {"$lte": [{"$toLong": "$claimed_at"}, {"$subtract": [server_now, stale_ms]}]},
        },
        [{"$set": {"claimed_at": "$$NOW"}}],
    )
    return taken.modified_count == 1

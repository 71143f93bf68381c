"""The site's database and its fixed collections, with their indexes, and reads and writes by
many `_id`s (`$in`, a few dozen ids a command).

Collections:
- ``submissions``: every attempt with its verdict (the audit trail).
- ``solves``: the first accepted solve of each (programmer, problem); a unique key makes it count
  once. The source of truth: every board can be rebuilt from it.
- ``scores``: every scored report (several a programmer and problem, one a request): the log of
  the best-score boards, rebuilt from it as the others are from ``solves``.
- the engine's collections (``entries.<board>``, ``orders``, ``order_sets``, ``appliers``,
  ``group_names``): see `leaderboard.entries`, `.orders` and `.applier`, which alone name them.
  Entries are read by `_id` alone: the index of the seed's query (``keys.$**``), which only
  `rebuild_boards --verify` reads, is made for the length of that check (`indexes_for_a_while`).
- ``problem_stats``: one document per problem, its solver count and its first and latest
  solvers, kept beside the log (see `solvers`, which alone names its fields);
  ``problem_days``, one index per problem and UTC day, counting its solvers of each minute; and
  ``problem_solvers``, every problem's solvers in solve order, one chunk a minute
  (`solver_pages` reads a page of them).
- ``requests``: API idempotency keys and their first answers.
- ``board_versions``: one counter per board, bumped by every change (see `live`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from django.conf import settings
from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.collection import Collection
from pymongo.database import Database

from .client import DURABLE, database_in_reach
from .indexes import indexes_ensure_at_first_use


def get_db() -> Database:
    """The site's database, with the indexes correctness rests on (made on first use)."""
    db = database_in_reach()
    indexes_ensure_at_first_use(db)
    return db


def submissions() -> Collection:
    return get_db()["submissions"]


def solves() -> Collection:
    return get_db()["solves"]


def scores() -> Collection:
    """Every scored report (``{programmer_id, problem, score, solved_at, request, applied}``),
    the log of the best-score boards: several a (programmer, problem), one a request."""
    return get_db()["scores"]


def requests() -> Collection:
    return get_db()["requests"]


def import_ids() -> Collection:
    """The ids of the lines `import_solves` logged (``{_id: "import:<id>", body_hash, counted}``),
    kept for good: a file imported again a year later still changes nothing. Not in `requests`,
    whose expiry the embedded server enforces by reading every one of its documents each minute
    under its global lock (minutes at a million programmers' history)."""
    return get_db()["import_ids"]


def problem_stats() -> Collection:
    return get_db()["problem_stats"]


def problem_days() -> Collection:
    """Every problem's index of each UTC day: its solvers of each minute (see `solvers`)."""
    return get_db()["problem_days"]


def problem_solvers() -> Collection:
    """Every problem's solvers, a chunk a UTC minute (see `solvers`)."""
    return get_db()["problem_solvers"]


def board_versions() -> Collection:
    return get_db()["board_versions"]


def ids_per_read() -> int:
    """How many ids one `$in` on `_id` names (MONGODB_IDS_PER_READ, 25 unless set).

    The embedded server checks every document it finds against the whole list, so one read of n
    ids that all exist costs n² (5,000 took 25 s, 100 at a time 1 s); ids that do not exist cost
    almost nothing either way. Reading 30-day entries back, 25 a read cost about half what 100
    did, and 10 little less than 25 for more commands (`python -m tools.server_costs` measures
    all three). Real MongoDB looks each id up in the `_id` index: a deployment on it may set
    hundreds, for fewer round trips."""
    return settings.MONGODB_IDS_PER_READ


def id_parts(ids: Sequence) -> Iterator[list]:
    """`ids` in lists of at most `ids_per_read()`, one `$in` each."""
    size = ids_per_read()
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def find_by_ids(collection: Collection, ids: Sequence, projection: dict | None = None) -> Iterator:
    """The documents of `collection` with these `_id`s (those that exist), read in pieces."""
    for part in id_parts(ids):
        yield from collection.find({"_id": {"$in": part}}, projection)


def delete_by_ids(collection: Collection, ids: Sequence) -> int:
    """Delete the documents of `collection` with these `_id`s, in pieces; how many there were."""
    return sum(
        collection.delete_many({"_id": {"$in": part}}).deleted_count for part in id_parts(ids)
    )


def fixed_indexes() -> dict[str, list[IndexModel]]:
    """The indexes of the fixed collections of `solutions`."""
    return {
        "submissions": [
            IndexModel([("programmer_id", ASCENDING), ("submitted_at", DESCENDING)]),
            IndexModel([("submitted_at", DESCENDING)]),
        ],
        # Idempotency keys outlive any retry worth answering: a solve older than the late
        # limit (30 days by default) is refused anyway.
        "requests": [IndexModel([("claimed_at", ASCENDING)], expireAfterSeconds=45 * 86400)],
        "solves": [
            # A programmer solves a problem once: a re-solve is refused by this key.
            # Also every read of the log: a programmer's solves, a range of programmers'.
            IndexModel([("programmer_id", ASCENDING), ("problem", ASCENDING)], unique=True),
            # Who solved on a day: the programmers a new day moves (`leaderboard.day_change`),
            # one range of a day's solves.
            IndexModel([("solved_at", ASCENDING)]),
            IndexModel([("applied", ASCENDING)], partialFilterExpression={"applied": False}),
            # The moves of problem counts a crash left unfinished (see `solvers`): only solves
            # with a move under way have the field.
            IndexModel([("problem_move_at", ASCENDING)], sparse=True),
            # The held solves, which the release walks every minute (see `holds`): only they
            # have the field, and only while a competition is frozen or just ended.
            IndexModel([("held_until", ASCENDING)], sparse=True),
        ],
        # Whom batches moved while a board's next day was prepared (`day_change`), by its id.
        "prep_moved": [
            IndexModel([("prep", ASCENDING)]),
            IndexModel([("at", ASCENDING)], expireAfterSeconds=3 * 86400),
        ],
        "scores": [
            # A report counts once whatever its retries: one a request (the judge's key).
            IndexModel([("request", ASCENDING)], unique=True),
            # A programmer's reports (refresh, rebuild), a range of programmers'.
            IndexModel([("programmer_id", ASCENDING), ("solved_at", ASCENDING)]),
            # Who reported on a day: the programmers a new day moves (`day_change`).
            IndexModel([("solved_at", ASCENDING)]),
            IndexModel([("applied", ASCENDING)], partialFilterExpression={"applied": False}),
        ],
    }


def namespace(collection: Collection) -> str:
    """ "database.collection", as a write sent with others names its collection."""
    return f"{collection.database.name}.{collection.name}"


def write_together(writes: list) -> None:
    """Send writes to several collections (each model naming its `namespace`) as one ordered
    command (`bulkWrite`, MongoDB 8.0), durable like every write of the site: each runs only if
    every one before it did, so a compare-and-swap put first (an upsert that meets a duplicate
    key when the version it expects is gone) stops the rest."""
    if writes:
        get_db().client.bulk_write(writes, ordered=True, write_concern=DURABLE)

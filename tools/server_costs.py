"""What the embedded server (SecantusDB) charges for a document, by its shape and its indexes:
the figures behind the engine's `_id` reads and behind how long an import takes.

    python -m tools.server_costs            # 20,000 documents a row, about a minute
    python -m tools.server_costs --documents 2000

Each write row inserts the documents, 1,000 a command, into a fresh collection of a scratch
server of its own (its data in a temporary directory, on disk as `make run` keeps it) and prints
the microseconds a document took and its BSON size. The read rows read 1,000 of the 30-day
entries back whole by `_id`: so many at a time with `$in` (the server checks each document found
against the whole list, so a long list costs more a document; `MONGODB_IDS_PER_READ`), and as one
range of `_id`, which the server answers by scanning the whole collection. The server is one
Python process: what it spends on a document is the floor of any bulk load through it, whatever
the client does.
"""

from __future__ import annotations

import argparse
import datetime as dt
import tempfile
import time
from collections.abc import Callable

import bson
from pymongo import ASCENDING, IndexModel, MongoClient
from pymongo.collection import Collection

from solutions.mongo import fixed_indexes
from tools.embedded_mongo import EmbeddedServer

BATCH = 1_000
DAYS = 42  # the board days a 30-day board's entry keeps
MOMENT = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
SORT_KEY = 16_964_543_115  # a sort key of the engine's size: past 2**31, so stored as an int64


def log_line(n: int) -> dict:
    """A line of the `solves` log, as an import writes it."""
    return {
        "programmer_id": n // 3,
        "problem": f"problem-{n % 500:03d}",
        "points": 1,
        "solved_at": MOMENT,
        "applied": True,
        "problem_counted": True,
        "request": f"import:history-{n}",
        "logged_at": MOMENT,
    }


def day_values(value: Callable[[int], object]) -> Callable[[int], dict]:
    return lambda n: {"_id": n, "days": {str(20_742 + d): value(d) for d in range(2 * DAYS)}}


def entry(n: int) -> dict:
    """A 30-day board's entry: each kept day's score and sort key, and what the orders hold
    (``{rev}`` alone: the entry as it is, as an import leaves every entry)."""
    return {
        "_id": n,
        "handle": f"coder{n:07d}",
        "groups": [],
        "sums": {str(20_742 + d): d % 4 for d in range(DAYS)},
        "keys": {str(20_742 + d): SORT_KEY + d for d in range(DAYS)},
        "rev": 0,
        "placed": {"rev": 0},
    }


LOG_INDEXES = fixed_indexes()["solves"]  # the unique key, and two an imported line has no key in
UNIQUE_KEY = next(model for model in LOG_INDEXES if model.document.get("unique"))
WILDCARD = IndexModel([("keys.$**", ASCENDING)])
ENTRY_ROW = ("a 30-day board's entry", entry, [])
WRITES: list[tuple[str, Callable[[int], dict], list[IndexModel]]] = [
    ("a log line, `_id` only", log_line, []),
    ("a log line with the log's unique key", log_line, [UNIQUE_KEY]),
    ("a log line with all the log's indexes", log_line, LOG_INDEXES),
    (f"{2 * DAYS} int32 values", day_values(lambda d: d), []),
    (f"{2 * DAYS} int64 values (sort keys)", day_values(lambda d: SORT_KEY + d), []),
    (f"{2 * DAYS} doubles", day_values(lambda d: float(SORT_KEY + d)), []),
    (f"{2 * DAYS} datetimes", day_values(lambda d: MOMENT), []),
    ENTRY_ROW,
    ("a 30-day board's entry, with `keys.$**`", entry, [WILDCARD]),
]


def micros_each(documents: int, started: float) -> float:
    return (time.perf_counter() - started) / documents * 1e6


def insert_row(collection: Collection, make: Callable[[int], dict], documents: int) -> float:
    """Microseconds a document, inserted BATCH a command."""
    made = [make(n) for n in range(documents)]
    started = time.perf_counter()
    for start in range(0, documents, BATCH):
        collection.insert_many(made[start : start + BATCH], ordered=False)
    return micros_each(documents, started)


IDS_PER_IN = (100, 25, 10)


def read_rows(collection: Collection) -> list[tuple[str, float]]:
    """Microseconds a document read back whole: by `_id`, so many a `$in`, then as one range."""
    wanted = list(range(1_000, 2_000))
    rows = []
    for per_read in IDS_PER_IN:
        started = time.perf_counter()
        for start in range(0, len(wanted), per_read):
            list(collection.find({"_id": {"$in": wanted[start : start + per_read]}}))
        rows.append((f"1,000 read back by `_id`, {per_read} a `$in`", micros_each(1_000, started)))
    started = time.perf_counter()
    list(collection.find({"_id": {"$gte": wanted[0], "$lte": wanted[-1]}}))
    return [*rows, ("1,000 read as one `_id` range (a scan)", micros_each(len(wanted), started))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=20_000, help="documents a write row")
    documents = parser.parse_args(argv).documents
    print(f"| {documents:,} documents | µs a document | bytes |")
    print("|---|---|---|")
    with (
        tempfile.TemporaryDirectory(prefix="server-costs-") as storage,
        EmbeddedServer(storage=storage) as server,
        MongoClient(server.uri) as client,
    ):
        database = client["server_costs"]
        for number, (name, make, indexes) in enumerate(WRITES):
            collection = database[f"row{number}"]
            if indexes:
                collection.create_indexes(indexes)
            micros = insert_row(collection, make, documents)
            print(f"| {name} | {micros:.0f} | {len(bson.encode(make(0)))} |")
        for name, micros in read_rows(database[f"row{WRITES.index(ENTRY_ROW)}"]):
            print(f"| {name}, of {documents:,} | {micros:.0f} | |")


if __name__ == "__main__":
    main()

"""What the MongoDB server spent its time on during the load, collection by collection: its own
``top`` command (mongotop's source), read every few seconds and summed across the restarts the
faults cause (a restarted server counts from zero again).

``top`` times each command from its dispatch to its answer, so on a server whose commands share
one interpreter the times of commands running at once overlap: the shares say where the server's
time goes, the CPU table (`cpu`) says how much it had. The client-level ``bulkWrite`` names no
collection and is not in ``top``: the solves' own writes (`mongo.write_together`) are the rest.
"""

from __future__ import annotations

import threading
from collections import Counter

from pymongo import MongoClient
from pymongo.errors import PyMongoError

SAMPLE_SECONDS = 5.0
SECTIONS = ("queries", "getmore", "insert", "update", "remove", "commands")

Totals = Counter  # {(namespace, section): microseconds}, and {(namespace, section, "n"): count}


class TopWatch:
    """Reads ``top`` between `start()` and `stop()`; what the server did in between, restarts
    included, is `totals()`."""

    def __init__(self, uri: str, database: str) -> None:
        self._client = MongoClient(uri, serverSelectionTimeoutMS=1000, connectTimeoutMS=1000)
        self._database = database
        self._first: Totals | None = None
        self._last: Totals = Counter()
        self._done: Totals = Counter()  # what servers that are gone did
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="top-watch", daemon=True)

    def start(self) -> None:
        self._sample()
        self._thread.start()

    def stop(self) -> Totals:
        self._stop.set()
        self._thread.join()
        self._sample()
        self._client.close()
        return self.totals()

    def totals(self) -> Totals:
        return self._done + _minus(self._last, self._first or Counter())

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self._sample()

    def _sample(self) -> None:
        try:
            reading = _top(self._client, self._database)
        except PyMongoError:
            return  # the server is down: the next reading after its return counts from zero
        if self._first is None:
            self._first = reading
        elif sum(reading.values()) < sum(self._last.values()):  # a new server since
            self._done += _minus(self._last, self._first)
            self._first = Counter()
        self._last = reading


def _top(client: MongoClient, database: str) -> Totals:
    answer = client.admin.command("top")
    totals: Totals = Counter()
    for namespace, sections in answer["totals"].items():
        if not namespace.startswith(database + "."):
            continue
        collection = namespace.removeprefix(database + ".")
        for section in SECTIONS:
            totals[(collection, section)] += sections[section]["time"]
            totals[(collection, section, "n")] += sections[section]["count"]
    return totals


def _minus(later: Totals, earlier: Totals) -> Totals:
    difference = Counter(later)
    difference.subtract(earlier)
    return +difference  # only what grew


def top_table(totals: Totals, accepted: int, rows: int = 15) -> list[str]:
    """The markdown table of the collections and kinds of command that took the most of the
    server's time: their share, their count an accepted solve and their time each."""
    times = {key: t for key, t in totals.items() if len(key) == 2}
    whole = sum(times.values()) or 1
    lines = [
        "| collection | commands | share of the time | per accepted solve | ms each |",
        "|---|---|---|---|---|",
    ]
    for key, spent in sorted(times.items(), key=lambda item: -item[1])[:rows]:
        count = totals[(*key, "n")] or 1
        per_solve = f"{count / accepted:.2f}" if accepted else "—"
        lines.append(
            f"| {key[0]} | {key[1]} | {100 * spent / whole:.1f}% | {per_solve} "
            f"| {spent / count / 1000:.2f} |"
        )
    return lines

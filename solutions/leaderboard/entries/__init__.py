"""The entries: one document per (board, programmer), and how a solve counts in it.

This package is the only code that names an entry field path or a board's entries collection:
the others ask it through its functions (what an entry's placement is, which moves take a
programmer from what the orders hold to their entry, which entries the orders are behind). The
one update a solve runs on an entry, an aggregation pipeline, is built in `counting`; the entry
a rebuild computes from a programmer's solves alone, which must be the same, in `from_solves`.

**Entries** (``entries.<board>``), one document per (board, programmer)::

    {_id: <programmer id>, handle, groups: ["country:BD", "org:..."],
     days: {"<epoch day>": count}, last: {"<epoch day>": latest solve time that day},
     sums: {"<day>": score}, keys: {"<day>": sort key},
     applied: [ids of the latest solves counted], rev: <changes so far>,
     trimmed: <the day old days were last trimmed>,
     placed: {rev} or {keys, handle, groups, rev}}  # what the orders hold for this programmer

A streak board's entry (`maths.streak_scores`) keeps, instead of ``days`` and ``last``, its
recent solve days: ``first: {"<epoch day>": first solve time that day}`` and
``began: {"<epoch day>": first day of the run of solve days holding it}``, from `streaks_from`
on, which is all a late solve needs however long the streak; ``sums`` holds each day's current
streak (or ``all``, the longest).

A best-score board's entry (`maths.best_total`) keeps instead the best of each (problem, day) its
reports still need, ``best: [{p: problem slug, d: epoch day (0 all time), v: value, t: when it
was first reported}]``, and ``sums`` each day's total of the bests inside its window.

A solve runs one aggregation-pipeline update on the entry (`counting.solve_pipeline`), idempotent
by the solve's id (``applied``): a retry after a fault counts nothing twice. The seed's query,
"the board of day D" sorted by ``keys.D`` (`entries_by_key`), is served by the wildcard index on
``keys.$**`` on real MongoDB, made for the check alone (`seed_query_indexes`); requests read the
orders instead, and `verify` checks the orders against that query.

Each entry records in ``placed`` what the orders hold for it and at which ``rev`` of the entry
(see `applier`, which moves the orders from ``placed`` to the entry's current keys): ``{rev}``
alone while they hold the entry as it is, which saves a third of its bytes; an update that
changes its keys, handle or groups writes ``placed`` out in full first (`counting.placed_kept`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from pymongo import ASCENDING, DESCENDING, IndexModel, UpdateOne
from pymongo.collection import Collection

from ... import mongo
from .. import encoding, maths, moving
from .counting import APPLIED_KEPT, SolveEvent, placed_kept, solve_pipeline


def board_key(window: maths.Window, day: int) -> str:
    """The field name of a board day: the epoch day, or ``all`` for all-time boards."""
    return maths.ALL_TIME_KEY if window.is_all_time else str(day)


# --- the collection and its indexes -----------------------------------------------------------


def entries(board_slug: str) -> Collection:
    # Board slugs are validated SlugFields, so they are safe in a collection name.
    return mongo.get_db()[f"entries.{board_slug}"]


def seed_query_indexes(board_slugs: Iterable[str]) -> dict[str, list[IndexModel]]:
    """The index of the seed's per-day query (`entries_by_key`) on these boards' entries:
    `keys.$**`, on a server that reads wildcard indexes (not the embedded one:
    `mongo.server_uses_wildcard_indexes`). Only `rebuild_boards --verify` reads it, and makes it
    for the length of its check: kept, it would cost every solve on real MongoDB an index key
    deleted and inserted for each day whose key the solve rewrites (up to 38 a board). There is
    no `sums.$**` either: no query filters or sorts on a day's sums (its key orders by score
    first)."""
    if not mongo.server_uses_wildcard_indexes():
        return {}
    wildcard = [IndexModel([("keys.$**", ASCENDING)], name="keys_wildcard")]
    return {f"entries.{slug}": wildcard for slug in board_slugs}


# --- entries ----------------------------------------------------------------------------------


def entries_count_solve(counts: Iterable[tuple[str, maths.Window, SolveEvent]], today: int) -> None:
    """Count a solve in the programmer's entry of each board ((board slug, window, the board's
    event) each), once whatever the retries, in one command (`count_writes`)."""
    mongo.write_together(count_writes(counts, today))


def count_writes(counts: Iterable[tuple[str, maths.Window, SolveEvent]], today: int) -> list:
    """The writes that count a solve in the programmer's entry of each board: one pipeline update
    of the entry a board, as the seed has it, idempotent by the solve's id. Until its orders
    follow (`applier.orders_catch_up`), the solve stays unapplied in the log, for a retry or the
    repair task to finish."""
    return [
        UpdateOne(
            {"_id": event.programmer_id},
            solve_pipeline(window, event, today),
            upsert=True,
            namespace=mongo.namespace(entries(board_slug)),
        )
        for board_slug, window, event in counts
    ]


def entry_read(board_slug: str, programmer_id: int, day_keys: Iterable[str] = ()) -> dict:
    """A programmer's entry (handle, groups, and the sums and keys of `day_keys`); {} if none."""
    projection = {"handle": 1, "groups": 1}
    for day_key in day_keys:
        projection |= {f"sums.{day_key}": 1, f"keys.{day_key}": 1}
    return entries(board_slug).find_one({"_id": programmer_id}, projection) or {}


def entry_sum(entry: dict, day_key: str) -> int:
    return entry.get("sums", {}).get(day_key, 0)


def entry_member(entry: dict, day_key: str, scope: str = "") -> encoding.Member | None:
    """The programmer's member of a board day's order (of the group `scope`; "" everybody's),
    from their entry (`entry_read`); None when the entry does not put them there. A day is in
    the orders when its key is positive, as `records_by_day` and the seed's query have it."""
    key = entry.get("keys", {}).get(day_key, 0)  # 0: not on that day
    if key <= 0 or (scope and scope not in entry.get("groups", [])):
        return None
    return encoding.Member(key, entry["handle"], entry["_id"])


def entries_members(
    board_slug: str, programmer_ids: Iterable[int], day_key: str, scope: str = ""
) -> dict[int, encoding.Member]:
    """{programmer id: their member of the order} of a board day for those on it, in the group
    (one `$in` read)."""
    found = entries(board_slug).find(
        {"_id": {"$in": list(programmer_ids)}}, {"handle": 1, f"keys.{day_key}": 1, "groups": 1}
    )
    members = (entry_member(doc, day_key, scope) for doc in found)
    return {member.programmer_id: member for member in members if member is not None}


def entries_set(programmer_id: int, documents: dict[str, dict | None]) -> None:
    """Set a programmer's entries ({board slug: entry computed from their solves, None: off the
    board}), keeping what the orders hold: each entry's revision goes up, so the orders are
    behind it until an applier moves them (`applier.entries_replace` lists the programmer as
    pending first)."""
    for board_slug, document in documents.items():
        fields = document or {"handle": "", "groups": [], "sums": {}, "keys": {}}
        fields = {name: value for name, value in fields.items() if name not in ("_id", "rev")}
        # What a solve or a report adds to (none off the board).
        kept = ("days", "last", "first", "began", "best")
        unset = [name for name in kept if name not in fields]
        changes = {name: {"$literal": value} for name, value in fields.items()}
        changes |= {"rev": {"$add": [{"$ifNull": ["$rev", 0]}, 1]}, "placed": placed_kept()}
        update = [{"$set": changes}, *([{"$unset": unset}] if unset else [])]
        # Off a board it never reached, a programmer gets no entry: an empty one would be a
        # stored entry on no day, which a rebuild's dry run counts as one to remove.
        exists_or_counts = document is not None
        entries(board_slug).update_one({"_id": programmer_id}, update, upsert=exists_or_counts)


def applied_with(entry: dict, solve_ids: Iterable[str]) -> dict:
    """An entry computed from the log (`from_solves`) that remembers the latest of its solves'
    ids as counted, so a late retry of one of them counts nothing again."""
    return entry | {"applied": sorted(solve_ids)[-APPLIED_KEPT:]}


def comparable(entry: dict) -> dict:
    """An entry without the engine's bookkeeping, to compare with what a rebuild computes."""
    bookkeeping = ("applied", "placed", "prep_from", "rev", "trimmed")
    kept = {k: v for k, v in entry.items() if k not in bookkeeping}
    if "best" in kept:  # a list in the order the bests came: compared as a set
        kept["best"] = sorted(kept["best"], key=lambda best: (best["d"], best["p"]))
    return kept


# --- what the orders hold for an entry ---------------------------------------------------------


def placement(entry: dict) -> dict:
    """What the orders hold for an entry once it is placed: its keys, handle and groups, and
    the entry's revision they reflect."""
    return {
        "keys": entry.get("keys", {}),
        "handle": entry.get("handle", ""),
        "groups": entry.get("groups", []),
        "rev": entry.get("rev", 0),
    }


def placed_as_is(entry: dict) -> dict:
    """The entry, with ``placed`` saying its orders hold it as it is (a rebuild builds them so)."""
    return entry | {"placed": {"rev": entry.get("rev", 0)}}


def placed_of(entry: dict) -> dict | None:
    """What the orders hold for an entry (None: nothing yet), ``{rev}`` written out in full."""
    placed = entry.get("placed")
    if placed is None or "keys" in placed:
        return placed
    if placed.get("rev", 0) != entry.get("rev", 0):
        raise ValueError(f"entry {entry.get('_id')}: placed at rev {placed} but the entry is not")
    return placement(entry)


_PLACEMENT = {"handle": 1, "groups": 1, "keys": 1, "rev": 1, "placed": 1}
_PLACEMENT_BEFORE = {**_PLACEMENT, "prep_from": 1}  # with what a preparation began from


@dataclass(frozen=True)
class Behind:
    """An entry the orders are behind: what they hold for it (`was`, None: nothing yet) and
    what they will hold once moved (`now`, its `placement`)."""

    programmer_id: int
    was: dict | None
    now: dict

    def moves(self, oldest_day: int, frontier: int) -> dict[tuple[str, str], moving.Move]:
        """{(day, scope): move} taking the programmer from `was` to `now` in the orders kept,
        from `oldest_day` to the board's `frontier` (see `orders`)."""
        old = _records_placed(self.was, self.programmer_id, oldest_day, frontier)
        new = _records_placed(self.now, self.programmer_id, oldest_day, frontier)
        return {
            place: moving.Move(old.get(place), new.get(place))
            for place in set(old) | set(new)
            if old.get(place) != new.get(place)
        }

    def groups_joined(self) -> set[str]:
        """The groups the entry is in that the orders do not hold it in yet."""
        return set(self.now["groups"]) - set((self.was or {}).get("groups", []))


def entries_behind(board_slug: str, programmer_ids: list[int]) -> Iterator[Behind]:
    """Those of these programmers whose orders are behind their entry on a board (one read)."""
    for entry in entries(board_slug).find({"_id": {"$in": programmer_ids}}, _PLACEMENT):
        was, now = placed_of(entry), placement(entry)
        if was != now:
            yield Behind(entry["_id"], was, now)


def _records_placed(
    placed: dict | None, pid: int, oldest_day: int, frontier: int
) -> dict[tuple[str, str], bytes]:
    """{(day, scope): record} of a placement: what the orders hold for it on each day kept."""
    if not placed:
        return {}
    scopes = scopes_of(placed)
    days = records_by_day(placed, pid, oldest_day, frontier)
    return {(day_key, scope): record for day_key, record in days for scope in scopes}


def scopes_of(placed: dict) -> list[str]:
    """The orders of a day a placement is in: everybody's (""), then each of its groups'."""
    return ["", *placed.get("groups", [])]


def records_by_day(
    placed: dict, pid: int, oldest_day: int, frontier: int
) -> Iterator[tuple[str, bytes]]:
    """(day, record) of each day kept, from `oldest_day` to `frontier`, that programmer `pid`'s
    placement puts them on (the days after the frontier have no orders yet: see `orders`)."""
    tail = encoding.handle_bytes(placed["handle"], pid)
    for day_key, key in placed.get("keys", {}).items():
        if key > 0 and (day_key == maths.ALL_TIME_KEY or oldest_day <= int(day_key) <= frontier):
            yield day_key, encoding.record_of(key, tail)


def day_moves(
    placed: dict | None, programmer_id: int, day: int, copied: bool
) -> dict[tuple[str, str], moving.Move]:
    """{(day, scope): move} that makes a new day's order hold a placement (see `day_change`):
    the day's orders start as copies of the day before's (`copied`; else empty, as a calendar
    period's first day), holding the placement's record of the day before, and must hold its
    record of the day itself."""
    if not placed:
        return {}
    key = str(day)
    records = dict(records_by_day(placed, programmer_id, day - 1 if copied else day, day))
    old, new = records.get(str(day - 1)) if copied else None, records.get(key)
    if old == new:
        return {}
    return {(key, scope): moving.Move(old, new) for scope in scopes_of(placed)}


def placed_writes(
    behind: dict[str, list[Behind]], preps: Mapping[str, dict] | None = None
) -> list[UpdateOne]:
    """The writes that record in each entry what the orders now hold for it, unless a later
    applier already recorded a newer revision: ``{rev}`` alone if the entry is still at it. Sent
    with the batch's other writes (`mongo.write_together`). `preps`: {board: the next day's
    preparation under way (its ``id``, and ``prev`` in its later rounds)}: an entry moved on
    such a board keeps, the first time, what the orders held for it before (``prep_from``),
    which the preparation's orders hold it as (`placed_before_prep`)."""
    updates = []
    for board_slug, moved in behind.items():
        where = mongo.namespace(entries(board_slug))
        prep = (preps or {}).get(board_slug)
        for entry in moved:
            rev = entry.now["rev"]
            still = {"$eq": [{"$ifNull": ["$rev", 0]}, rev]}
            changes = {"placed": {"$cond": [still, {"rev": rev}, {"$literal": entry.now}]}}
            if prep:
                changes = {"prep_from": _prep_from(prep["id"], prep.get("prev")), **changes}
            older = {"_id": entry.programmer_id, "placed.rev": {"$not": {"$gte": rev}}}
            updates.append(UpdateOne(older, [{"$set": changes}], namespace=where))
    return updates


def _prep_from(prep_id: str, prev_id: str | None) -> dict:
    """``prep_from`` as the entry keeps it (an expression): as it is if it is this
    preparation's already, else this preparation's id and ``placed`` in full as it is before the
    write (the `$set` evaluates every field from the document before it), with the one it kept
    for the round before, `prev_id`, as ``prev`` (the next round moves tomorrow's orders from
    it: `day_change`)."""
    first = {"id": prep_id, "placed": placed_kept()}
    if prev_id is None:
        return {"$cond": [_prep_from_is(prep_id), "$prep_from", first]}
    before = {"id": "$prep_from.id", "placed": "$prep_from.placed"}
    after_prev = {"$cond": [_prep_from_is(prev_id), {**first, "prev": before}, first]}
    return {"$cond": [_prep_from_is(prep_id), "$prep_from", after_prev]}


def _prep_from_is(prep_id: str) -> dict:
    return {"$eq": [{"$ifNull": ["$prep_from.id", None]}, prep_id]}


def placed_before_prep(entry: dict, prep_id: str, then: str | None = None) -> dict | None:
    """What the orders held for an entry when the preparation `prep_id` began (see
    `day_change`): what it kept when an applier first moved it since (``prep_from``, or the one
    before it, ``prev``), else what it kept when an applier first moved it since the
    preparation `then` that came next began, else what the orders hold for it now (None:
    nothing). An entry nobody moved between two beginnings was held the same at both."""
    kept = entry.get("prep_from") or {}
    for slot in (kept, kept.get("prev") or {}):
        if slot.get("id") == prep_id:
            return slot.get("placed")
    if then is not None and kept.get("id") == then:
        return kept.get("placed")
    return placed_of(entry)


# --- the seed's query: a board day straight from the entries -------------------------------------


def entries_by_key(board_slug: str, day_key: str, scope: str = "") -> Iterator[encoding.Member]:
    """The members of a board day in listing order by the seed's query over the entries,
    ``find({"keys.D": {"$gt": 0}}).sort({"keys.D": -1})``: what its order must hold (`verify`).
    Real MongoDB serves it from the wildcard index ``keys.$**``; the embedded server (SecantusDB
    0.7) never uses a wildcard index (so it gets none, see `seed_query_indexes`) and scans the
    collection. Rebuild-time, never on a request.

    A group's scope (one of ``groups``) is filtered here, not in the query: real MongoDB serves
    a sort from a wildcard index only when the predicate and the sort are on that one field, so
    the query stays exactly that; a group's day reads the whole day through the index.
    Ties: the query leaves equal keys in any order; an order lists them by their records' bytes
    (`encoding.Member.record`: lower-case handle, then id), so each run of them is sorted so
    here."""
    path = f"keys.{day_key}"
    found = entries(board_slug).find(
        {path: {"$gt": 0}}, {"handle": 1, "groups": 1, path: 1}, sort=[(path, DESCENDING)]
    )
    tie: list[encoding.Member] = []
    for entry in found:
        if (member := entry_member(entry, day_key, scope)) is None:
            continue  # in another group
        if tie and tie[0].key != member.key:
            yield from sorted(tie, key=encoding.Member.record)
            tie = []
        tie.append(member)
    yield from sorted(tie, key=encoding.Member.record)


def entries_places(board_slug: str, oldest_day: int, frontier: int) -> set[tuple[str, str]]:
    """{(day, scope)} of every order the entries put somebody in from `oldest_day` to the
    `frontier`, as the orders hold them (a scan: rebuild-time)."""
    places: set[tuple[str, str]] = set()
    for entry in entries(board_slug).find({}, {"keys": 1, "handle": 1, "groups": 1}):
        places.update(_records_placed(placement(entry), entry["_id"], oldest_day, frontier))
    return places


def entries_placed(board_slug: str, programmer_ids: list[int]) -> Iterator[dict]:
    """The entries of these programmers with what the orders hold for them (`placed_of`) and
    what they held when a day's preparation began (`placed_before_prep`): one `$in` read a few
    dozen at a time."""
    yield from mongo.find_by_ids(entries(board_slug), programmer_ids, _PLACEMENT_BEFORE)

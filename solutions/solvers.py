"""Who solved each problem: a count and two short lists per problem, kept beside the `solves` log.

The problems page shows how many programmers solved each problem, and a problem's page its first
and its latest solvers. Counting the log at request time would cost one index key per solver, so
each problem has one document in `problem_stats`, changed with every solve, hide, ban and return:
``{_id: slug, solvers: n, days: {day: n}, first: [{p, at}], recent: [{p, at}], ops: [...]}``.
`first` keeps the SOLVERS_KEPT earliest solves (by time, then programmer id) and `recent` the
SOLVERS_KEPT latest, each kept in order by the update itself (``$push`` with ``$sort`` and
``$slice``), so a late solve lands in its place. Reading them is one `_id` read, whatever the
number of programmers. The lists keep more than a page shows, and readers leave out whoever is
hidden or banned at read time, so a hide never leaves a problem's page short (a hide also pulls
them out; see below).

Like the boards, the counts leave out hidden and banned programmers: a solve is in its problem's
count while its programmer is on the boards. Each solve in the log says whether it is
(``problem_counted``), and every change of that is a **move**, made exactly once:

1. the move is recorded on the solve (``problem_move``: "+" or "-" and a fresh id, the op, with
   ``problem_move_at``), by a conditional write that only one caller can win; a solve logged by a
   programmer on the boards is logged with its "+" move already recorded (no extra write);
2. the problem's document applies the op only if its recent ops (the last OPS_KEPT) do not
   already hold it: ``$inc`` the count, ``$push`` (or ``$pull``) the lists, ``$push`` the op;
   then the day's index the same way, then the minute's chunk (both below);
3. the solve is marked done (``problem_counted`` set, the move removed), only if it still
   records that op.

A crash between 2 and 3 leaves the move recorded: whoever meets the solve next (a retry of the
request, a second report of the solve, `moves_repair` from the repair task, or a resync of the
programmer) does 2 and 3 again, and 2 finds its op among the recent ones and adds nothing. Only a
finish that comes after OPS_KEPT later moves of the same problem could count twice, and the
repair task finishes every move older than two minutes. A counter that disagrees with the log for
any other reason (solves logged by a bulk import, data restored from a backup) is recomputed from
the log by `StatsBuild`, in the pass over the log that builds every board (after an import, and
by `rebuild_boards`).

Hiding a programmer moves each of their solves out ("-"), and their return moves them back in:
`programmer_sync` brings every solve of one programmer to where their visibility says, so its cost
is that programmer's solves, never the number of programmers.

A held solve (see `holds`: a frozen competition's problem) is in no count: it is logged without a
move, the syncs and the recount leave it out, and its release syncs its programmer, which moves
it in.

**Every solver, a page at a time.** The lists keep SOLVERS_KEPT; a problem's page and the API
page through every solver in solve order (time, then programmer id; `solver_pages` reads them), so
the same moves keep them in **chunks** of one problem's solvers of one UTC minute:
``problem_solvers``, ``{_id: "<slug>|<day>|<minute>", s: [{p, at}]}`` (the minute of the UTC day,
0 to 1,439), sorted by the update itself (``$push`` with ``$sort``). Two counts say where each
chunk is, both changed exactly once in step 2: the problem's ``days.<day>``, and the **day
index** in ``problem_days``, ``{_id: "<slug>|<day>", m: {minute: n}, ops: [...]}``, guarded by
its own recent ops. A chunk is changed after them, by programmer (a "+" pushes them unless the
chunk lists them, a "-" pulls them): doing it again changes nothing.

The largest documents, whatever the number of solvers: a problem's, a count a UTC day with a
solve, OPS_KEPT ops and 2 × SOLVERS_KEPT solvers (~45 KB after ten years); a day index, at most
1,440 counts and OPS_KEPT ops (under 20 KB); a chunk, one problem's solvers of one minute, ~40
bytes each (16 MB would take 400,000 in one minute).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field

from bson import ObjectId
from django.utils import timezone
from pymongo import UpdateOne
from pymongo.collection import Collection as MongoCollection
from pymongo.errors import DuplicateKeyError

from . import holds, mongo

SOLVERS_KEPT = 20  # kept in each list of a problem's document
SOLVERS_SHOWN = 10  # shown on a problem's page
OPS_KEPT = 100  # recent ops a problem's document (and a day index) remembers (see above)
SOLVERS_PAGE = 50  # solvers a page of a problem's solvers shows
MINUTES_A_DAY = 1440
ADD, REMOVE = "+", "-"


@dataclass(frozen=True)
class Solver:
    programmer_id: int
    at: dt.datetime


@dataclass(frozen=True)
class ProblemStats:
    solvers: int = 0
    first: list[Solver] = field(default_factory=list)  # earliest first
    recent: list[Solver] = field(default_factory=list)  # latest first


def day_minute(at: dt.datetime) -> tuple[int, int]:
    """The UTC day and the minute of that day (0 to 1,439) whose chunk lists a solve made at `at`
    (UTC: chunks never move with the leaderboard's time zone)."""
    day, minute = divmod(int(at.timestamp() // 60), MINUTES_A_DAY)
    return day, minute


def day_id(slug: str, day: int) -> str:
    """The `_id` of a problem's day index (`problem_days`)."""
    return f"{slug}|{day}"


def chunk_id(slug: str, day: int, minute: int) -> str:
    """The `_id` of a problem's chunk of one minute (`problem_solvers`)."""
    return f"{slug}|{day}|{minute}"


# --- moves -----------------------------------------------------------------------------------


def move_new(*, add: bool) -> dict:
    """The fields that record a new move on a solve (step 1)."""
    op = f"{ADD if add else REMOVE}{ObjectId()}"
    return {"problem_move": op, "problem_move_at": timezone.now()}


def move_writes(solve: dict) -> list:
    """The writes that finish a fresh solve's move into its problem's count (steps 2 and 3), to
    send with the solve's others (`mongo.write_together`), in order: the count, the day index,
    the chunk, the mark. A duplicate key in them (the op applied already, a document made at the
    same moment) stops what follows: `move_finish` then does it again the careful way."""
    op = solve.get("problem_move")
    if not op or not op.startswith(ADD):
        return []
    return [
        *(
            UpdateOne(unseen, change, upsert=True, namespace=mongo.namespace(collection))
            for collection, unseen, change in _move_changes(solve, op)
        ),
        UpdateOne(*_mark(solve, op), namespace=mongo.namespace(mongo.solves())),
    ]


def _mark(solve: dict, op: str) -> tuple[dict, dict]:
    """The solve marked with its move done (step 3)."""
    return {"_id": solve["_id"], "problem_move": op}, {
        "$set": {"problem_counted": op.startswith(ADD)},
        "$unset": {"problem_move": "", "problem_move_at": ""},
    }


def move_finish(solve: dict) -> None:
    """Finish the move a solve records, if any (steps 2 and 3), a write at a time: idempotent."""
    op = solve.get("problem_move")
    if not op:
        return
    for collection, unseen, change in _move_changes(solve, op):
        _apply(collection, unseen, change, upsert=op.startswith(ADD))
    mongo.solves().update_one(*_mark(solve, op))


def _move_changes(solve: dict, op: str) -> list[tuple[MongoCollection, dict, dict]]:
    """(collection, filter, update) of each write of step 2, in order: the problem's document,
    the day's index, the minute's chunk. Each filter matches nothing once its write is done."""
    return [
        (mongo.problem_stats(), *_stats_change(solve, op)),
        (mongo.problem_days(), *_day_change(solve, op)),
        (mongo.problem_solvers(), *_chunk_change(solve, add=op.startswith(ADD))),
    ]


def _apply(collection: MongoCollection, unseen: dict, change: dict, *, upsert: bool) -> None:
    """One write of a move, made only where its filter still matches."""
    try:
        collection.update_one(unseen, change, upsert=upsert)
    except DuplicateKeyError:
        # Either the write is in the document already, or another solver made the document at
        # the same moment: now that it exists, apply the change if it is not.
        collection.update_one(unseen, change)


def _stats_change(solve: dict, op: str) -> tuple[dict, dict]:
    """(filter, update) of one op on its problem's document, unless it is among the recent ops."""
    entry = {"p": solve["programmer_id"], "at": solve["solved_at"]}
    day = f"days.{day_minute(solve['solved_at'])[0]}"  # a number: never a user's string
    change: dict = {"$push": {"ops": {"$each": [op], "$slice": -OPS_KEPT}}}
    if op.startswith(ADD):
        change["$inc"] = {"solvers": 1, day: 1}
        change["$push"]["first"] = {
            "$each": [entry],
            "$sort": {"at": 1, "p": 1},
            "$slice": SOLVERS_KEPT,
        }
        change["$push"]["recent"] = {
            "$each": [entry],
            "$sort": {"at": -1, "p": 1},
            "$slice": SOLVERS_KEPT,
        }
    else:
        change["$inc"] = {"solvers": -1, day: -1}
        change["$pull"] = {"first": {"p": entry["p"]}, "recent": {"p": entry["p"]}}
    return {"_id": solve["problem"], "ops": {"$ne": op}}, change


def _day_change(solve: dict, op: str) -> tuple[dict, dict]:
    """(filter, update) of one op on the index of its solve's day, unless it is among the
    index's recent ops: its minute's count goes up or down by one."""
    day, minute = day_minute(solve["solved_at"])
    change = {
        "$inc": {f"m.{minute}": 1 if op.startswith(ADD) else -1},
        "$push": {"ops": {"$each": [op], "$slice": -OPS_KEPT}},
    }
    return {"_id": day_id(solve["problem"], day), "ops": {"$ne": op}}, change


def _chunk_change(solve: dict, *, add: bool) -> tuple[dict, dict]:
    """(filter, update) listing the solver in the chunk of their solve's minute (`add`) or
    taking them out of it, by programmer: done again, it changes nothing."""
    key = chunk_id(solve["problem"], *day_minute(solve["solved_at"]))
    programmer_id = solve["programmer_id"]
    if not add:
        return {"_id": key}, {"$pull": {"s": {"p": programmer_id}}}
    entry = {"p": programmer_id, "at": solve["solved_at"]}
    push = {"$push": {"s": {"$each": [entry], "$sort": {"at": 1, "p": 1}}}}
    return {"_id": key, "s.p": {"$ne": programmer_id}}, push


def move_start(solve: dict, *, add: bool) -> bool:
    """Move a solve into its problem's count (`add`) or out of it, unless it is there already
    or another move is under way. Returns whether this call made the move."""
    fields = move_new(add=add)
    claimed = mongo.solves().update_one(
        {
            "_id": solve["_id"],
            "problem_move": {"$exists": False},
            "problem_counted": {"$ne": True} if add else True,
        },
        {"$set": fields},
    )
    if not claimed.matched_count:
        return False
    move_finish({**solve, **fields})
    return True


MOVE_FIELDS = {
    "problem": 1,
    "programmer_id": 1,
    "solved_at": 1,
    "problem_counted": 1,
    holds.HELD_UNTIL: 1,
}


def programmer_sync(*, programmer_id: int, counted: bool) -> int:
    """Bring every solve of one programmer into their problems' counts (`counted`: they are on
    the boards) or out of them, finishing any move under way first; a held solve stays out. One
    read of their solves, and three writes for each solve that moves. Returns how many moved."""
    moved = 0
    solves = mongo.solves().find(
        {"programmer_id": programmer_id}, {**MOVE_FIELDS, "problem_move": 1}
    )
    for solve in solves:
        if solve.get("problem_move"):
            move_finish(solve)
            solve["problem_counted"] = solve["problem_move"].startswith(ADD)
        wanted = counted and not holds.is_held(solve)
        if bool(solve.get("problem_counted")) != wanted:
            moved += move_start(solve, add=wanted)
    return moved


def moves_repair(*, older_than: dt.timedelta) -> int:
    """Finish the moves a crash left recorded (older than `older_than`). Returns how many."""
    stale = mongo.solves().find(
        {"problem_move_at": {"$lt": timezone.now() - older_than}},
        {**MOVE_FIELDS, "problem_move": 1},
    )
    count = 0
    for solve in stale:
        move_finish(solve)
        count += 1
    return count


# --- reads -----------------------------------------------------------------------------------


def solvers_from(entries: list[dict]) -> list[Solver]:
    """The solvers a list of a document names (``[{p, at}]``)."""
    return [Solver(programmer_id=e["p"], at=e["at"]) for e in entries]


def stats_read(*, slugs: Collection[str], lists: bool = False) -> dict[str, ProblemStats]:
    """{slug: its stats} for these problems, in one `$in` read by `_id` (without the lists
    unless `lists`). A problem nobody counted yet is left out."""
    fields = {"solvers": 1, **({"first": 1, "recent": 1} if lists else {})}
    found = mongo.problem_stats().find({"_id": {"$in": list(slugs)}}, fields)
    return {
        doc["_id"]: ProblemStats(
            solvers=doc.get("solvers", 0),
            first=solvers_from(doc.get("first", [])),
            recent=solvers_from(doc.get("recent", [])),
        )
        for doc in found
    }


# --- rebuild ---------------------------------------------------------------------------------


def _kept(solvers: list[Solver], latest: bool) -> list[Solver]:
    if latest:
        ordered = sorted(solvers, key=lambda s: (-s.at.timestamp(), s.programmer_id))
    else:
        ordered = sorted(solvers, key=lambda s: (s.at, s.programmer_id))
    return ordered[:SOLVERS_KEPT]


class StatsBuild:
    """Every problem's document, day index and chunk and every solve's mark computed from the
    log, given a programmer's solves at a time (`add`), then written (`finish`): one pass over
    the log can rebuild the boards and these at once (`services.boards_rebuild_all`). Run while
    no solves arrive, like a board rebuild."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = defaultdict(int)
        self.first: dict[str, list[Solver]] = defaultdict(list)  # trimmed as they grow
        self.recent: dict[str, list[Solver]] = defaultdict(list)
        # {(slug, day, minute): its solvers}: every counted solve (a rebuild's memory).
        self.chunks: dict[tuple[str, int, int], list[Solver]] = defaultdict(list)
        # {counted: [solve id]}: the solves whose mark is wrong or whose move is open.
        self.to_mark: dict[bool, list] = {True: [], False: []}

    def add(self, solves: list[dict], *, counted: bool) -> None:
        """Solves of the log (their programmer, problem, time and mark), in their problems'
        counts or not (`counted`: their programmer is on the boards)."""
        for solve in solves:
            if solve.get("problem_counted") != counted or "problem_move" in solve:
                self.to_mark[counted].append(solve["_id"])
            if counted:
                self._count(solve["problem"], Solver(solve["programmer_id"], solve["solved_at"]))

    def _count(self, slug: str, solver: Solver) -> None:
        self.counts[slug] += 1
        self.chunks[(slug, *day_minute(solver.at))].append(solver)
        for kept, latest in ((self.first, False), (self.recent, True)):
            kept[slug].append(solver)
            if len(kept[slug]) > 4 * SOLVERS_KEPT:
                kept[slug] = _kept(kept[slug], latest)

    def finish(self) -> int:
        """Replace every problem's document, day index and chunk, and mend the marks. Returns
        how many problems have solvers."""
        stats, days, chunks = self._documents()
        for collection, documents in (
            (mongo.problem_stats(), stats),
            (mongo.problem_days(), days),
            (mongo.problem_solvers(), chunks),
        ):
            collection.delete_many({})
            for start in range(0, len(documents), 1000):
                collection.insert_many(documents[start : start + 1000])
        self._marks_mend()
        return len(stats)

    def _documents(self) -> tuple[list[dict], list[dict], list[dict]]:
        """The problems' documents, the day indexes and the chunks, as the moves keep them."""
        stats = {
            slug: {
                "_id": slug,
                "solvers": count,
                "first": _listed(_kept(self.first[slug], latest=False)),
                "recent": _listed(_kept(self.recent[slug], latest=True)),
                "ops": [],
                "days": {},
            }
            for slug, count in self.counts.items()
        }
        days: dict[tuple[str, int], dict] = {}
        chunks = []
        for (slug, day, minute), listed in self.chunks.items():
            counts = stats[slug]["days"]
            counts[str(day)] = counts.get(str(day), 0) + len(listed)
            index = days.setdefault((slug, day), {"_id": day_id(slug, day), "m": {}, "ops": []})
            index["m"][str(minute)] = len(listed)
            ordered = sorted(listed, key=lambda s: (s.at, s.programmer_id))
            chunks.append({"_id": chunk_id(slug, day, minute), "s": _listed(ordered)})
        return list(stats.values()), list(days.values()), chunks

    def _marks_mend(self) -> None:
        """Mark the solves whose mark is wrong or whose move is open."""
        done = {"$unset": {"problem_move": "", "problem_move_at": ""}}
        # Only those, found on the way: the bulk loads log theirs marked, and writing (or even
        # matching on the server) every solve of a large log takes minutes.
        for counted, ids in self.to_mark.items():
            for part in mongo.id_parts(ids):
                mongo.solves().update_many(
                    {"_id": {"$in": part}}, {**done, "$set": {"problem_counted": counted}}
                )


def _listed(solvers: list[Solver]) -> list[dict]:
    return [{"p": s.programmer_id, "at": s.at} for s in solvers]

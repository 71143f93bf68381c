"""Who solved each problem: a count and two short lists per problem, kept beside the `solves` log.

The problems page shows how many programmers solved each problem, and a problem's page its first
and its latest solvers. Counting the log at request time would cost one index key per solver, so
each problem has one document in `problem_stats`, changed with every solve, hide, ban and return:
``{_id: slug, solvers: n, first: [{p, at}], recent: [{p, at}], ops: [...]}``. `first` keeps the
SOLVERS_KEPT earliest solves (by time, then programmer id) and `recent` the SOLVERS_KEPT latest,
each kept in order by the update itself (``$push`` with ``$sort`` and ``$slice``), so a late solve
lands in its place. Reading them is one `_id` read, whatever the number of programmers. The lists
keep more than a page shows, and readers leave out whoever is hidden or banned at read time, so
a hide never leaves a problem's page short (a hide also pulls them out; see below).

Like the boards, the counts leave out hidden and banned programmers: a solve is in its problem's
count while its programmer is on the boards. Each solve in the log says whether it is
(``problem_counted``), and every change of that is a **move**, made exactly once:

1. the move is recorded on the solve (``problem_move``: "+" or "-" and a fresh id, the op, with
   ``problem_move_at``), by a conditional write that only one caller can win; a solve logged by a
   programmer on the boards is logged with its "+" move already recorded (no extra write);
2. the problem's document applies the op only if its recent ops (the last OPS_KEPT) do not
   already hold it: ``$inc`` the count, ``$push`` (or ``$pull``) the lists, ``$push`` the op;
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

**Every solver, a page at a time.** The lists above keep SOLVERS_KEPT; a problem's page and
`GET /api/v1/problems/<slug>/solvers` page through all of them in solve order (time, then
programmer id), so the same moves keep them in **parts** too: ``problem_solvers`` holds one
document per problem and UTC day with solvers, ``{_id: "<slug>|<day>", s: [{p, at}]}``, its list
sorted by the update itself (``$push`` with ``$sort``), and the problem's document counts each
day's solvers (``days.<day>``) in the very update that counts the solver, so the day counts are
as exactly-once as the count. A part is changed after the count, by programmer: a "+" pushes the
programmer unless the part lists them already, a "-" pulls them; both are idempotent, so a retry
or the repair simply does it again. A page is then the problem's day counts (one `_id` read),
which say which days hold its offsets, and those days' parts read with ``$slice`` projections
(the first from its offset, the others from their start): three commands and one page of
solvers, whatever the number of solvers. A part holds one problem's solvers of one day, about
40 bytes each: 16 MB would take 400,000 solvers of one problem in one day.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field

from bson import ObjectId
from django.utils import timezone
from pymongo import UpdateOne
from pymongo.errors import DuplicateKeyError

from . import holds, mongo

SOLVERS_KEPT = 20  # kept in each list of a problem's document
SOLVERS_SHOWN = 10  # shown on a problem's page
OPS_KEPT = 100  # recent ops a problem's document remembers (see the module docstring)
SOLVERS_PAGE = 50  # solvers a page of a problem's solvers shows
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


@dataclass(frozen=True)
class SolversPage:
    """Solvers `offset` onwards of a problem's `total`, in solve order."""

    total: int
    offset: int
    solvers: list[Solver]


def part_day(at: dt.datetime) -> int:
    """The UTC day whose part lists a solve made at `at` (UTC: parts never move with the
    leaderboard's time zone)."""
    return int(at.timestamp() // 86400)


def part_id(slug: str, day: int) -> str:
    return f"{slug}|{day}"


# --- moves -----------------------------------------------------------------------------------


def move_new(*, add: bool) -> dict:
    """The fields that record a new move on a solve (step 1)."""
    op = f"{ADD if add else REMOVE}{ObjectId()}"
    return {"problem_move": op, "problem_move_at": timezone.now()}


def move_writes(solve: dict) -> list:
    """The writes that finish a fresh solve's move into its problem's count (steps 2 and 3), to
    send with the solve's others (`mongo.write_together`), in order: the count, the part, the
    mark. A duplicate key in them (the op applied already, a document made at the same moment)
    stops what follows: `move_finish` then does it again the careful way."""
    op = solve.get("problem_move")
    if not op or not op.startswith(ADD):
        return []
    count_filter, count_change = _stats_change(solve, op)
    entry = {"p": solve["programmer_id"], "at": solve["solved_at"]}
    key = part_id(solve["problem"], part_day(solve["solved_at"]))
    return [
        UpdateOne(
            count_filter,
            count_change,
            upsert=True,
            namespace=mongo.namespace(mongo.problem_stats()),
        ),
        UpdateOne(
            {"_id": key, "s.p": {"$ne": solve["programmer_id"]}},
            {"$push": {"s": {"$each": [entry], "$sort": {"at": 1, "p": 1}}}},
            upsert=True,
            namespace=mongo.namespace(mongo.problem_solvers()),
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
    """Finish the move a solve records, if any (steps 2 and 3): idempotent."""
    op = solve.get("problem_move")
    if not op:
        return
    _stats_apply(solve, op)
    _part_apply(solve, add=op.startswith(ADD))
    mongo.solves().update_one(*_mark(solve, op))


def _stats_apply(solve: dict, op: str) -> None:
    """Apply one op to its problem's document, unless it is among the recent ops."""
    unseen, change = _stats_change(solve, op)
    try:
        mongo.problem_stats().update_one(unseen, change, upsert=op.startswith(ADD))
    except DuplicateKeyError:
        # Either the op is in the document already, or another problem's first solver made
        # the document at the same moment: now that it exists, apply the op if it is not.
        mongo.problem_stats().update_one(unseen, change)


def _stats_change(solve: dict, op: str) -> tuple[dict, dict]:
    """(filter, update) of one op on its problem's document, unless it is among the recent ops."""
    entry = {"p": solve["programmer_id"], "at": solve["solved_at"]}
    day = f"days.{part_day(solve['solved_at'])}"  # a number: never a user's string
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


def _part_apply(solve: dict, *, add: bool) -> None:
    """List the solver in the part of their solve's day (`add`) or take them out of it. By
    programmer, so doing it again changes nothing (see the module docstring)."""
    key = part_id(solve["problem"], part_day(solve["solved_at"]))
    programmer_id = solve["programmer_id"]
    if not add:
        mongo.problem_solvers().update_one({"_id": key}, {"$pull": {"s": {"p": programmer_id}}})
        return
    entry = {"p": programmer_id, "at": solve["solved_at"]}
    push = {"$push": {"s": {"$each": [entry], "$sort": {"at": 1, "p": 1}}}}
    unlisted = {"_id": key, "s.p": {"$ne": programmer_id}}
    try:
        mongo.problem_solvers().update_one(unlisted, push, upsert=True)
    except DuplicateKeyError:
        # The part lists them already, or another solver of the day made it at the same moment.
        mongo.problem_solvers().update_one(unlisted, push)


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


def _solvers(entries: list[dict]) -> list[Solver]:
    return [Solver(programmer_id=e["p"], at=e["at"]) for e in entries]


def stats_read(*, slugs: Collection[str], lists: bool = False) -> dict[str, ProblemStats]:
    """{slug: its stats} for these problems, in one `$in` read by `_id` (without the lists
    unless `lists`). A problem nobody counted yet is left out."""
    fields = {"solvers": 1, **({"first": 1, "recent": 1} if lists else {})}
    found = mongo.problem_stats().find({"_id": {"$in": list(slugs)}}, fields)
    return {
        doc["_id"]: ProblemStats(
            solvers=doc.get("solvers", 0),
            first=_solvers(doc.get("first", [])),
            recent=_solvers(doc.get("recent", [])),
        )
        for doc in found
    }


def solvers_page(*, slug: str, offset: int, limit: int) -> SolversPage:
    """Solvers `offset` to `offset + limit` of a problem, in solve order, and how many it has:
    its day counts (one `_id` read), then the parts of the days that hold those offsets, sliced
    on the server (at most two reads, `limit` days at most): the same at any number of solvers."""
    stats = mongo.problem_stats().find_one({"_id": slug}, {"days": 1}) or {}
    days = sorted((int(day), count) for day, count in stats.get("days", {}).items() if count > 0)
    total = sum(count for _, count in days)
    wanted: list[tuple[int, int]] = []  # (day, from which of its solvers), in order
    before = 0
    for day, count in days:
        if before + count > offset and before < offset + limit:
            wanted.append((day, max(0, offset - before)))
        before += count
    found: list[Solver] = []
    if wanted:
        (first_day, skip), rest = wanted[0], wanted[1:]
        first = mongo.problem_solvers().find_one(
            {"_id": part_id(slug, first_day)}, {"s": {"$slice": [skip, limit]}}
        )
        found += _solvers((first or {}).get("s", []))
        if rest and len(found) < limit:
            ids = [part_id(slug, day) for day, _ in rest]
            parts = mongo.problem_solvers().find(
                {"_id": {"$in": ids}}, {"s": {"$slice": limit - len(found)}}
            )
            by_id = {part["_id"]: part.get("s", []) for part in parts}
            for part in ids:
                found += _solvers(by_id.get(part, []))
    return SolversPage(total=total, offset=offset, solvers=found[:limit])


# --- rebuild ---------------------------------------------------------------------------------


def _kept(solvers: list[Solver], latest: bool) -> list[Solver]:
    if latest:
        ordered = sorted(solvers, key=lambda s: (-s.at.timestamp(), s.programmer_id))
    else:
        ordered = sorted(solvers, key=lambda s: (s.at, s.programmer_id))
    return ordered[:SOLVERS_KEPT]


class StatsBuild:
    """Every problem's document and every solve's mark computed from the log, given a
    programmer's solves at a time (`add`), then written (`finish`): one pass over the log can
    rebuild the boards and these at once (`services.boards_rebuild_all`). Run while no solves
    arrive, like a board rebuild."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = defaultdict(int)
        self.first: dict[str, list[Solver]] = defaultdict(list)  # trimmed as they grow
        self.recent: dict[str, list[Solver]] = defaultdict(list)
        # {(slug, day): its solvers}: every counted solve, for the parts (a rebuild's memory).
        self.parts: dict[tuple[str, int], list[Solver]] = defaultdict(list)
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
        self.parts[slug, part_day(solver.at)].append(solver)
        for kept, latest in ((self.first, False), (self.recent, True)):
            kept[slug].append(solver)
            if len(kept[slug]) > 4 * SOLVERS_KEPT:
                kept[slug] = _kept(kept[slug], latest)

    def finish(self) -> int:
        """Replace every problem's document and mend the marks. Returns how many problems have
        solvers."""
        documents = [
            {
                "_id": slug,
                "solvers": count,
                "first": _listed(_kept(self.first[slug], latest=False)),
                "recent": _listed(_kept(self.recent[slug], latest=True)),
                "ops": [],
                "days": {},
            }
            for slug, count in self.counts.items()
        ]
        by_slug = {document["_id"]: document for document in documents}
        parts = []
        for (slug, day), listed in self.parts.items():
            by_slug[slug]["days"][str(day)] = len(listed)
            parts.append({"_id": part_id(slug, day), "s": _listed(sorted(listed, key=_order))})
        mongo.problem_stats().delete_many({})
        mongo.problem_solvers().delete_many({})
        if documents:
            mongo.problem_stats().insert_many(documents)
        for start in range(0, len(parts), 1000):
            mongo.problem_solvers().insert_many(parts[start : start + 1000])
        done = {"$unset": {"problem_move": "", "problem_move_at": ""}}
        # Only the solves whose mark is wrong or whose move is open are written, found on the
        # way: the bulk loads log theirs already marked, and writing (or even matching on the
        # server) every solve of a large log takes minutes.
        for counted, ids in self.to_mark.items():
            for start in range(0, len(ids), mongo.IDS_PER_READ):
                mongo.solves().update_many(
                    {"_id": {"$in": ids[start : start + mongo.IDS_PER_READ]}},
                    {**done, "$set": {"problem_counted": counted}},
                )
        return len(documents)


def _order(solver: Solver) -> tuple:
    return solver.at, solver.programmer_id


def _listed(solvers: list[Solver]) -> list[dict]:
    return [{"p": s.programmer_id, "at": s.at} for s in solvers]

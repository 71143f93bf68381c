"""What a batch that placed programmers in the orders finishes for the site (`orders_moved`, the
finisher every write that waits for the orders hands to the engine: `leaderboard.pending_place`,
`leaderboard.entries_replace`): the solves and scored reports it placed marked applied in their
logs, and the live versions of the boards it moved bumped, in the batch's own command.

The engine does not know what a tag means; a request tags its programmers with its solve's or
report's id (`solve_tag`, `score_tag`) and reads them back here. Imports none of the other write
modules: `programmers`, `solves` and `upkeep` all hand it over.
"""

from __future__ import annotations

from bson import ObjectId
from pymongo import UpdateMany

from .. import leaderboard, live, mongo

SOLVE_TAG = "solve-"
SCORE_TAG = "score-"


def solve_tag(solve_id: ObjectId) -> str:
    return f"{SOLVE_TAG}{solve_id}"


def score_tag(report_id: ObjectId) -> str:
    return f"{SCORE_TAG}{report_id}"


def orders_moved(moved: leaderboard.Moved) -> leaderboard.Finish:
    """Finish the work of every request whose programmers a batch moved, once for the batch and
    before any of them answers: mark their solves and reports applied in the logs, and bump the
    live counters of the boards it moved (live pages see the changes on their next poll),
    written with the batch's own writes. A solve whose orders never moved stays unapplied for a
    retry or the repair task."""
    solve_ids = [ObjectId(t.removeprefix(SOLVE_TAG)) for t in moved.tags if t.startswith(SOLVE_TAG)]
    writes: list = []
    if solve_ids:
        applied = {"_id": {"$in": solve_ids}}, {"$set": {"applied": True}}
        writes.append(UpdateMany(*applied, namespace=mongo.namespace(mongo.solves())))
    score_ids = [ObjectId(t.removeprefix(SCORE_TAG)) for t in moved.tags if t.startswith(SCORE_TAG)]
    if score_ids:
        applied = {"_id": {"$in": score_ids}}, {"$set": {"applied": True}}
        writes.append(UpdateMany(*applied, namespace=mongo.namespace(mongo.scores())))
    boards = sorted(moved.boards)
    writes += live.board_versions_writes(boards)
    return leaderboard.Finish(writes, then=lambda: live.board_versions_forget(boards))

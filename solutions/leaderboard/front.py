"""The engine's front door: what the site asks of it, in the domain's words, answered with plain
dataclasses. Everything outside `solutions.leaderboard` goes through here (re-exported by the
package: `leaderboard.page(...)`), never through a module behind it (`tests/test_architecture.py`).

The engine knows boards by slug and window (`maths.Window`), days by key (`day_key`) and
groups by scope (``country:BD``); it knows nothing of the site's models, and never reaches up
into them: a batch hands what it moved (`Moved`) to the finisher its caller passes in.

Writes:
- `solve_count`, `solve_count_writes`: count a solve in a programmer's entry on each board.
- `pending_place`: list programmers as pending and wait until a batch places them in the orders;
  each batch hands what it moved to the caller's `finish`, written in the batch's own command.
- `entries_replace`: a programmer's entries set from the log, then placed the same way.
- `days_pass`: the passes of tomorrow's orders begun in the last hour of today, off the lease.
- `board_rebuild` (`BoardBuild` for several boards in one pass), `board_verify`, `orders_prune`.

Reads (`front_reads`), each document by `_id` and read once a request, at any size:
- `page`: a page of a board day in listing order, with the day's histogram.
- `score_range`: how many score in a range, and a page of them.
- `histogram`: how many hold each score (exact at the scores asked).
- `standing`: one programmer's member of a board day, with neighbours and coming days' sums.
- `position`: one programmer's place in the listing order.
- `places`: the members of a few programmers at once (and one's neighbours).
- `group_page`, `group_standing`: the ranklist of countries or organizations.
- `walk`: every member in listing order (background work: it grows with the board).
"""

from __future__ import annotations

from collections.abc import Iterable

from . import applier, day_change, entries, journals, maths, orders, rebuild, verify
from .applier import Boards, Finish, Finisher, Moved, OrdersBehind
from .days_kept import current_day, history_from
from .entries import SolveEvent, seed_query_indexes
from .entries import applied_with as entry_applied_with
from .entries import board_key as day_key
from .entries.from_solves import Identity, entry_from_reports, entry_from_solves
from .groups import KINDS as GROUP_KINDS
from .groups import score_shown as group_score_shown
from .groups import score_text as group_score_text
from .rebuild import BATCH as REBUILD_BATCH
from .rebuild import QUIET, BoardBuild, Progress, RebuildReport
from .streaks import current_streak, longest_streak, solve_days, year_first_day
from .verify import VerifyReport

__all__ = [
    # what the front door hands over and takes
    "Boards",
    "BoardBuild",
    "Finish",
    "Finisher",
    "Identity",
    "Moved",
    "OrdersBehind",
    "Progress",
    "QUIET",
    "REBUILD_BATCH",
    "RebuildReport",
    "SolveEvent",
    "VerifyReport",
    # days and entries computed from the log (no I/O)
    "current_day",
    "day_key",
    "entry_applied_with",
    "entry_from_reports",
    "entry_from_solves",
    "history_from",
    "seed_query_indexes",
    # the streaks and the groups' scores (pure, like the maths)
    "GROUP_KINDS",
    "current_streak",
    "group_score_shown",
    "group_score_text",
    "longest_streak",
    "solve_days",
    "year_first_day",
    # writes
    "board_rebuild",
    "board_verify",
    "days_pass",
    "entries_replace",
    "folds_done",
    "orders_prune",
    "pending_place",
    "solve_count",
    "solve_count_writes",
]

Counts = Iterable[tuple[str, maths.Window, SolveEvent]]
"""(board slug, its window, the solve as that board counts it) of each board a solve counts on."""


# --- writes -------------------------------------------------------------------------------------


def solve_count(counts: Counts, today: int) -> None:
    """Count a solve in the programmer's entry on each board, once whatever the retries, in one
    command. Its orders follow with `pending_place`."""
    entries.entries_count_solve(counts, today)


def solve_count_writes(counts: Counts, today: int) -> list:
    """The writes of `solve_count`, for the caller to send with its own in one command."""
    return entries.count_writes(counts, today)


def pending_place(
    wanted: Iterable[tuple[str, int]] = (),
    *,
    tag: str = "",
    boards: Boards | None = None,
    finish: Finisher,
) -> None:
    """Place these (board slug, programmer id) in the orders (everybody pending when empty):
    they are listed as pending and a batch of the lease holder moves them, this request's or
    another's; each batch this request drives hands what it moved to `finish` and sends the
    writes it returns with its own (see `applier.Finisher`). `tag` names this request's
    programmers in `Moved.tags`; `boards` {slug: window}: the boards whose days every batch
    prepares. Raises `OrdersBehind` (a passing storage fault) when they are still pending after
    `applier.APPLY_WAIT_SECONDS`."""
    applier.orders_catch_up(wanted, tag=tag, boards=boards, finish=finish)


def days_pass(boards: Boards) -> list[str]:
    """Do the pass of tomorrow's orders on each of these boards whose preparation a batch began
    in the last hour of today, as its board's preparer and off the applier's lease, so that the
    solves go on meanwhile (see `day_change`); the next batch finishes them. Returns the boards
    whose pass this did."""
    return day_change.days_pass(boards)


def entries_replace(
    programmer_id: int,
    documents: dict[str, dict | None],
    *,
    boards: Boards | None = None,
    finish: Finisher,
) -> None:
    """Set a programmer's entries ({board slug: entry computed from the log, None: off the
    board}), then place them as `pending_place` does."""
    applier.entries_replace(programmer_id, documents, boards, finish=finish)


def board_rebuild(
    board_slug: str,
    window: maths.Window,
    computed: Iterable[tuple[dict, list[str]]],
    today: int,
    dry_run: bool,
) -> RebuildReport:
    """Make a board's entries and orders those computed from the log (each entry with the ids
    of the solves it counts, streamed); a dry run only reports what would change. `BoardBuild`
    builds several boards from one pass over the log."""
    return rebuild.board_rebuild(board_slug, window, computed, today, dry_run)


def board_verify(board_slug: str, today: int | None = None) -> VerifyReport:
    """Compare every order of a board's days kept with the seed's query over its entries."""
    return verify.board_verify(board_slug, today)


def orders_prune(board_slug: str, window: maths.Window, today: int) -> int:
    """Drop a board's orders of days past the history kept; returns how many."""
    return orders.orders_prune(board_slug, window, today)


def folds_done(board_slug: str) -> int:
    """How many times the board's journal was folded into its orders (its epoch)."""
    return journals.journal_read(board_slug).get("epoch", 0)

"""Writes of the core, a module a concern (the reads are `solutions.selectors`, which never
import these):

- `programmers`: signing up, a judge's unknown handle or problem registered on first use, the
  look-alike handle check, hiding, banning and restoring, and a programmer's entries recomputed
  from the logs (`programmer_refresh_boards`).
- `submissions`: every attempt, recorded by `submission_record`, which checks the refusals
  first; `answer_submit` judges an answer sent from a page, with guessing limited.
- `solves`: the times the boards take, a solve or a scored report logged and counted on every
  board (`solve_record`, `solve_report`, `score_record`).
- `applied`: `orders_moved`, what a batch that moved the orders finishes (the finisher every
  write that waits for the orders hands to the engine): the solves it placed marked applied.
- `upkeep`: beat's work: old orders pruned, solves a crash left unapplied repaired, held solves
  released.
- `rebuilds`: boards recomputed from the `solves` log, one, several or all of them.
- `bulk`: many solves logged at once (the demo's data, `import_solves`).

Inside the package imports point one way: `rebuilds` and `applied` import none of the others,
then come
`programmers`, `solves`, and on top `submissions`, `upkeep` and `bulk`. The names the site and
its tests call are re-exported here, so callers write `services.solve_record(...)`; a test that
replaces one patches the module that looks it up (`solves.solve_record`, for `solve_report`).
"""

from .applied import orders_moved
from .bulk import ImportedSolve, ImportReport, SolvesImport, solves_bulk_logging, solves_import
from .programmers import (
    HandleLooksTaken,
    handle_check_unlike_others,
    problem_get_or_register,
    programmer_create,
    programmer_get_or_register,
    programmer_refresh_boards,
    programmer_set_visibility,
)
from .rebuilds import board_rebuild, boards_rebuild, boards_rebuild_all, entry_from_solves
from .solves import (
    SolveRejected,
    score_record,
    solve_check_future,
    solve_check_time,
    solve_day,
    solve_record,
    solve_report,
)
from .submissions import SubmissionRefused, Verdict, answer_submit, submission_record
from .upkeep import days_prepare, orders_prune, solves_release, solves_repair

__all__ = [
    "HandleLooksTaken",
    "ImportReport",
    "ImportedSolve",
    "SolveRejected",
    "SolvesImport",
    "SubmissionRefused",
    "Verdict",
    "answer_submit",
    "board_rebuild",
    "boards_rebuild",
    "boards_rebuild_all",
    "days_prepare",
    "entry_from_solves",
    "handle_check_unlike_others",
    "orders_moved",
    "orders_prune",
    "problem_get_or_register",
    "programmer_create",
    "programmer_get_or_register",
    "programmer_refresh_boards",
    "programmer_set_visibility",
    "score_record",
    "solve_check_future",
    "solve_check_time",
    "solve_day",
    "solve_record",
    "solve_report",
    "solves_bulk_logging",
    "solves_import",
    "solves_release",
    "solves_repair",
    "submission_record",
]

"""Reads: board pages, ranks, forecasts and profiles. Every rank in the product comes from here.

By concern:
- `boards`: the visible boards (cached, and forgotten on every edit of a board), the default
  board, a page of a board day, a score range, how many score at least so much, the calendar
  periods, which days can be browsed.
- `standings`: where a programmer stands (`programmer_standing`, the one rank selector), with
  their neighbours and coming days (`programmer_around`), their place in the listed order, and
  the places of a few at once.
- `groups`: the ranklists of countries and organizations, and where one group stands.
- `search`: programmers by the start of their handle with their places, a programmer by handle,
  and the account a login names.
- `profiles`: whose profile a viewer may see, the profile, a year of solving, the problems
  solved, the submissions, the forecast's horizon and the profile card.
- `problems`: the published problems with their solver counts, a page of them, and a problem's
  solvers and the pages of all of them.
- `common`: what they share: `Row`, `Paged`, `BoardPage`, `Standing`, `PAGE_SIZE`, a day's
  key and how a row's rank is told.

The names the site and the tests use are re-exported here, so callers write
`selectors.board_page(...)` whatever module holds it; a read never imports a write.
"""

from .boards import (
    board_at_or_above,
    board_default,
    board_page,
    board_periods,
    board_score_range,
    boards_forget,
    boards_visible,
    boards_visible_cached,
    day_is_browsable,
)
from .common import PAGE_SIZE, BoardPage, Paged, Row, Standing, day_key
from .groups import GroupPage, GroupRow, group_ranklist, group_standing
from .problems import (
    PROBLEM_ORDERS,
    problem_solvers,
    problem_solvers_page,
    problems_page,
    problems_published,
    problems_with_solvers,
)
from .profiles import (
    Profile,
    Year,
    forecast_horizon,
    programmer_card,
    programmer_profile,
    programmer_profile_for,
    programmer_solved_problems,
    programmer_submissions,
    programmer_year,
)
from .search import (
    HANDLE_MATCHES_COUNTED,
    HANDLE_MATCHES_MAX,
    HandleMatches,
    programmer_by_handle,
    programmers_search,
    programmers_starting_with,
    user_logging_in_as,
    users_logging_in_as,
)
from .standings import (
    programmer_around,
    programmer_position,
    programmer_standing,
    programmers_places,
)

__all__ = [
    "HANDLE_MATCHES_COUNTED",
    "HANDLE_MATCHES_MAX",
    "PAGE_SIZE",
    "PROBLEM_ORDERS",
    "BoardPage",
    "GroupPage",
    "GroupRow",
    "HandleMatches",
    "Paged",
    "Profile",
    "Row",
    "Standing",
    "Year",
    "board_at_or_above",
    "board_default",
    "board_page",
    "board_periods",
    "board_score_range",
    "boards_forget",
    "boards_visible",
    "boards_visible_cached",
    "day_is_browsable",
    "day_key",
    "forecast_horizon",
    "group_ranklist",
    "group_standing",
    "problem_solvers",
    "problem_solvers_page",
    "problems_page",
    "problems_published",
    "problems_with_solvers",
    "programmer_around",
    "programmer_by_handle",
    "programmer_card",
    "programmer_position",
    "programmer_profile",
    "programmer_profile_for",
    "programmer_solved_problems",
    "programmer_standing",
    "programmer_submissions",
    "programmer_year",
    "programmers_places",
    "programmers_search",
    "programmers_starting_with",
    "user_logging_in_as",
    "users_logging_in_as",
]

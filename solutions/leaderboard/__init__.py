"""The leaderboard engine: one package, read top to bottom.

- `maths`: epoch days, windows, forward-dated sums, sort keys and ranks (pure; no I/O).
- `store`: everything on MongoDB: entries, score histograms, cached top pages, and the per-day
  queries that read them. It is the only module that names an entry field path or a board
  collection.
- `rebuild`: a board's entries and rank data computed from the `solves` log alone.

The maths are re-exported here, so callers write `leaderboard.Window` and `leaderboard.ROLLING`.
"""

from .maths import *  # noqa: F403
from .maths import (  # noqa: F401  (named for readers and linters)
    ALL_TIME,
    ALL_TIME_KEY,
    MONTH,
    ROLLING,
    WEEK,
    Window,
    date_to_day,
    day_to_date,
    epoch_day,
)

"""The leaderboard engine: one package, read top to bottom.

- `maths`: epoch days, windows, forward-dated sums, sort keys and ranks (pure; no I/O).
- `store`: everything on MongoDB: entries, score histograms, cached top pages, and the per-day
  queries that read them. It is the only module that names an entry field path or a board
  collection.
- `sets`: the sorted entry sets and their manifest, as bytes (pure; no I/O).
- `turns`: how the requests of one process waiting for the orders share one driver (no I/O).
- `groups`: countries and organizations ranked against each other: a group's score from its
  histogram, and its record in the day's ranklist, an order like the others (pure; no I/O).
- `rebuild`: a board's entries and rank data computed from the `solves` log alone.

The maths are re-exported here, so callers write `leaderboard.Window` and `leaderboard.ROLLING`.
"""

from .maths import *  # noqa: F403

"""The leaderboard engine: one package, read top to bottom.

- `maths`: epoch days, windows, forward-dated sums, sort keys and ranks (pure; no I/O).
- `sets`: the sorted entry sets and their manifest, as bytes (pure; no I/O); `encoding` the
  bytes of a member's record and of packed score counts; `moving` moves applied to them, and
  `rewrites` how the sets they change are written back (pure; no I/O).
- `expressions`: the maths as aggregation expressions (sort keys, dropping old day keys), the
  parts of the entries' update pipelines (pure; no I/O, names no field).
- `entries`: the entries on MongoDB (one per board and programmer) and the update that counts a
  solve in one, a sum or a streak. It is the only module that names an entry field path or a
  board's entries collection.
- `orders`: the listing order of every board day on MongoDB, as sets and a manifest: how they
  are stored and read; `order_writes`: how moves are folded into them and orders written in
  bulk.
- `journals`: each board's journal, where a batch records its moves until they are folded into
  the orders; `folds`: a full journal folded, and the group ranklists' moves.
- `reading`: a page, a rank or a neighbourhood of a board day, read by `_id` at any size.
- `applier`: the one lease holder that moves the orders after the entries, a batch at a time.
- `turns`: how the requests of one process waiting for the orders share one driver (no I/O).
- `groups`: countries and organizations ranked against each other: a group's score from its
  histogram, and its record in the day's ranklist, an order like the others (pure; no I/O).
- `rebuild`: a board's entries and rank data computed from the `solves` log alone.

The maths are re-exported here, so callers write `leaderboard.Window` and `leaderboard.ROLLING`.
"""

from .maths import *  # noqa: F403

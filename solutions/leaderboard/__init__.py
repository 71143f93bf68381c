"""The leaderboard engine: one package, read top to bottom, asked only through its front door.

**The front door** (`front`, `front_reads`, re-exported here): count a solve, place what is
pending, a rebuild; a page, a range of scores, the histogram, a standing with its neighbours, the
places of a few, a group page; each a function in the words below,
answering with plain dataclasses. The site writes `leaderboard.page(...)`, never
`leaderboard.reading...`: `tests/test_architecture.py` fails on an import of a module behind the
door from outside the package. The pure maths are re-exported too (`leaderboard.Window`,
`leaderboard.ROLLING`, `leaderboard.epoch_day`, ...), with the streaks and the groups' scores.

Glossary:
- **window**: which days a board sums (rolling last N days, calendar week or month, all time).
- **epoch day**: days since 1970-01-01 in the leaderboard's time zone; a **day key** names one
  in an entry (``"18281"``, or ``"all"`` on an all-time board).
- **entry**: one document per board and programmer: daily counts, the forward-dated **sums**
  (score of each day to come) and **keys** (score and tie-break in one sortable number).
- **member**: a programmer on a board day as an order holds them, a fixed-width **record**.
- **order**: the listing order of one board day and **scope** (everybody "", or a group such as
  ``country:BD``): sorted **sets** of at most 1,024 records, listed by manifests.
- **manifest**: what lists an order's sets (lengths, last members, score counts); the **root**
  is the order's own, and a **node** a manifest of manifests between them (`tree`).
- **histogram**: {score: members} of a board day, kept in its root; a rank is read from it.
- **gone list**: the members that left a set, pushed without rewriting the set.
- **journal**: one document a board where batches record each mover's **pair** (the record the
  orders hold, the record they hold now) until it is folded.
- **fold**: a full journal written into the orders' nodes, sets and roots, in a new **epoch**
  (each root records the epoch it holds, so a reader knows which pairs to lay over it).
- **lease**: the one right to move the orders, short and timed by the server's clock.
- **pending**: a programmer listed beside the lease as waiting to be moved, tagged by whoever
  listed them (a solve's id, say).
- **batch**: what the lease holder moves at once: up to 256 pending programmers on every board,
  in one read and one write of the journals, with its caller's **finisher** (what the batch
  moved, `Moved`, turned into writes sent in the same command: a solve marked applied).
- **placed**: what the orders hold for an entry, kept in the entry; an entry whose keys are
  ahead of it is behind, and its programmer pending.
- **frontier**: the last day a board keeps orders for: today, and tomorrow in the last hour.
- **day change** (**preparing** a day): making a new day's orders from the day before's by the
  moves the day brings, under the lease, before anybody reads them.
- **group**: a country or an organization; its **ranklist** is one more order of a board day,
  a record per group, ranked by a score computed from the group's own histogram.
- **forecast**: the sums of the days after today, if the programmer solves nothing more.
- **rebuild**: a board's entries and orders computed again from the `solves` log alone.

Behind the door:
- `maths`: epoch days, windows, forward-dated sums, sort keys and ranks (pure; no I/O).
- `sets`: the sorted entry sets and their manifest, as bytes (pure; no I/O); `encoding` the
  bytes of a member's record and of packed score counts; `moving` moves applied to them, and
  `rewrites` how the sets they change are written back (pure; no I/O); `tree` manifests of
  manifests (pure).
- `expressions`: the maths as aggregation expressions (sort keys, dropping old day keys), the
  parts of the entries' update pipelines (pure; no I/O, names no field).
- `days_kept`: how far back the engine keeps days and how far ahead its orders reach.
- `entries`: the entries on MongoDB (one per board and programmer) and the update that counts a
  solve in one, a sum or a streak. It is the only module that names an entry field path or a
  board's entries collection.
- `order_documents`: what an order's manifest and set documents hold; `orders`: the listing
  order of every board day on MongoDB, as sets and a manifest: how they are stored and read;
  `order_writes`: how moves are folded into them and orders written in bulk.
- `journals`: each board's journal, where a batch records its moves until they are folded into
  the orders; `folds`: a full journal folded, and the group ranklists' moves.
- `reading`: a page, a rank or a neighbourhood of a board day, read by `_id` at any size.
- `applier`: the one lease holder that moves the orders after the entries, a batch at a time;
  `lease` the lease and who is pending (and each board's preparer's); `day_change` a new
  day's orders made from the day before's, mostly off the lease, its pass in rounds;
  `day_copies` the day before's roots copied for it; `day_moves` the moves the day brings,
  written straight into its orders.
- `turns`: how the requests of one process waiting for the orders share one driver (no I/O).
- `groups`: countries and organizations ranked against each other: a group's score from its
  histogram, and its record in the day's ranklist, an order like the others (pure; no I/O).
- `streaks`: solve days and streaks (pure).
- `rebuild`: a board's entries and rank data computed from the `solves` log alone; `verify`
  the orders compared with the seed's query over the entries.
"""

from .front import *  # noqa: F403
from .front_reads import *  # noqa: F403
from .maths import *  # noqa: F403

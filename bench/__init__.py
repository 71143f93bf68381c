"""`manage.py bench`: what the common reads and writes cost as a board grows, in MongoDB
commands, bytes each way and time, called in process and through HTTP as users call them.

Why it exists: the design promises that a read or a solve costs the same at a thousand
programmers as at a million, in commands and in bytes (every request-time path is a bounded
number of `_id` reads and writes), and that benchmarks show it through HTTP. For each size the
bench seeds a scratch database with that many programmers on every board, measures each
operation, and prints one Markdown table with the sizes side by side, so what is not flat shows.

It sits beside `loadtest/`, outside `solutions`: like the load test it drives the site from
outside and starts the embedded server (`tools.embedded_mongo`), so the core never imports
`tools`; only the command (`solutions/management/commands/bench.py`) imports it.

Its parts, one module each:
- `counting`: the command listener (commands, bytes each way, the finds to explain) and
  `measure`, which every row goes through.
- `cpu`: the CPU an operation takes, the MongoDB server's process and the bench's own.
- `seed`: the MongoDB server to measure, the scratch database, the seeded boards and logs (and a
  best-score board of the bench's own when the site has none).
- `in_process`: selectors and services called directly: the engine's own cost.
- `web`: the site served over HTTP from a thread of the bench, and the requests users make.
- `ingest`: solves posted through gunicorn from 8 clients at once (`--ingest`).
- `new_day`: tomorrow made in the last hour of today (its beginning, its pass off the lease, its
  finish), then the first solve after each of a few midnights, with the day change it brings,
  and the first page read after it (the clock moved on, last at each size).
- `on_redis`: the same reads and a forward-dated solve on Redis sorted sets (`--redis`).
- `report`: the table and what is not the same at every size.
- `run`: the sizes one after another.
- `structure`: the order structure alone, in memory, at 1M to 100M members (`--structure`).
"""

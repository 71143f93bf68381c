"""The contest-day run: the production stack under a contest's load, with faults.

`make contest-day` (``python -m loadtest.contest_day``) starts PostgreSQL-backed gunicorn,
Redis, a Celery worker and beat and MongoDB, seeds a community and a running competition, and
points Locust at it. The modules, in the order a run uses them:

- ``plan``: the scenario's world (programmers, problems, the competition) and the load's shape,
  shared by every other module so the seed, the users and the verdict agree on it.
- ``seed``: the history (JSON Lines through ``import_solves``) and the site's setup, run inside
  Django.
- ``stack``: the processes of the production stack, and the faults done to them.
- ``locustfile``: who comes on contest day (viewers, judges, programmers, abusers) and the log
  each of them keeps of what it sent and was told.
- ``verdict``: the Jepsen-style checker. It recomputes every board and the standings by brute
  force from that log alone and compares them with what the site serves.
- ``proxy``: a TCP proxy that adds latency to every MongoDB round trip (the network of part 2).
- ``contest_day``: the driver that runs all of it and prints the verdict line.
"""

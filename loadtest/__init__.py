"""The contest-day run: the production stack under a contest's load, with faults.

`make contest-day` (``python -m loadtest.contest_day``) starts PostgreSQL-backed gunicorn,
Redis, a Celery worker and beat and MongoDB, seeds a community and a running competition, and
points Locust at it. The modules, in the order a run uses them:

- ``plan``: the scenario's world (programmers, problems, the competition) and the load's shape,
  shared by every other module so the seed, the users and the verdict agree on it.
- ``seed``: the history (JSON Lines through ``import_solves``) and the site's setup, run inside
  Django.
- ``stack``: the processes of the production stack, and the faults done to them.
- ``locustfile``: who comes on contest day (viewers, judges, programmers, abusers), and
  ``logbook``, the log they keep of what they sent and were told.
- ``verdict``: the Jepsen-style checker, a package: ``truth`` (that log read), ``boards`` and
  ``standings`` (each recomputed by brute force from the log alone and compared with what the
  site serves), ``request_log`` (latency, errors, outages, throughput); the report and the
  verdict in its ``__init__``.
- ``proxy``: a TCP proxy that adds latency to every MongoDB round trip (the network of part 2).
- ``contest_day``: the driver that runs all of it and prints the verdict line.
"""

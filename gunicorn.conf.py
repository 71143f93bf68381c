"""gunicorn's settings in production: ``gunicorn -c gunicorn.conf.py leaderboard_site.wsgi``.

gunicorn listens on the loopback, behind a buffering reverse proxy (nginx; the README's "Running
in production" has its server block): the proxy reads each request whole before it passes it on
and takes each answer whole, so a slow client holds a connection of the proxy, never a thread
here (two slow clients once held both sync workers of a site for 25 s). Threaded workers: a
request waiting for MongoDB (a solve waits for the batch that moves its programmer) holds one
thread of a worker, not the whole process.

Each value can be changed from the environment (GUNICORN_BIND or PORT, WEB_CONCURRENCY,
GUNICORN_THREADS), and by gunicorn's own command-line options, which win over this file (the
contest-day run sets its own workers and address: `loadtest/stack.py`).
"""

import os


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


def _cores() -> int:
    """The cores this process may run on (fewer than the machine's when it is pinned)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


bind = os.environ.get("GUNICORN_BIND") or f"127.0.0.1:{_env_int('PORT', 8000)}"
worker_class = "gthread"
workers = _env_int("WEB_CONCURRENCY", 2 * _cores())
threads = _env_int("GUNICORN_THREADS", 4)
# Above every wait a request makes: the engine's longest (a solve waiting for its batch) is kept
# under 20 s, one MongoDB command's under MONGODB_SOCKET_TIMEOUT_MS (20 s). A threaded worker
# tells the master it is alive while its threads wait, so this only ends a worker stuck whole.
timeout = 60
# On a restart or a stop (SIGTERM), the requests in flight get this long to finish.
graceful_timeout = 30
keepalive = 5
# A header spelt with underscores (X_Forwarded_For) would land in the environ under the same
# name as the one the proxy sets (HTTP_X_FORWARDED_FOR): such headers are dropped.
header_map = "drop"
# Each request on stdout, with the client's address as the proxy wrote it and the time taken.
accesslog = "-"
errorlog = "-"
access_log_format = (
    '%({x-forwarded-for}i)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s" %(M)sms'
)

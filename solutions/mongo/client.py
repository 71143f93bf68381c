"""The client: one a process, made lazily (pymongo is not fork-safe: never at import time), with
the options the site sets over its URI, and the database as every request sees it: writes
`DURABLE`, reads from the primary, a storage fault answered at once while the server is out of
reach, and one life of the server per request that answers for what it wrote.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from urllib.parse import parse_qsl, urlsplit

from django.conf import settings
from pymongo import MongoClient, ReadPreference, WriteConcern
from pymongo.database import Database
from pymongo.errors import AutoReconnect

# How often the driver looks at the server: after a fault, how soon the site sees it is back.
HEARTBEAT_MS = 1000

_client: MongoClient | None = None
_client_pid: int | None = None
_client_made = False  # whether `_client` is this module's own, not one given to `set_client`
_patient = False  # see `patient_commands`
_lock = threading.Lock()
# Databases whose first-use indexes the current client made (see `indexes`): a new client
# makes them again.
indexes_ready: set[str] = set()


def get_client() -> MongoClient:
    """The process's client, made on first use (pymongo is not fork-safe: never at import time)."""
    global _client, _client_pid, _client_made
    with _lock:
        if _client is None or _client_pid != os.getpid():
            _client = client_create(settings.MONGODB_URI, patient=_patient)
            _client_pid, _client_made = os.getpid(), True
            indexes_ready.clear()
        return _client


# What the site acknowledges (a 201, a form's "accepted") is on a majority of the replica set's
# members and in their journals: a failover or a killed server cannot take it back. Stated here,
# not left to the server's default (w: 1 before MongoDB 5.0, and w: 1 still on a replica set with
# an arbiter). A standalone server (the embedded one) takes "majority" as itself.
DURABLE = WriteConcern(w="majority", j=True)


def client_create(uri: str, *, patient: bool = False) -> MongoClient:
    """A client as the site uses one: writes `DURABLE`, answers within seconds (unless
    `patient`), and no retryable writes unless the URI asks for them (see `client_options`)."""
    return MongoClient(uri, **client_options(uri, patient=patient))


def client_options(uri: str, *, patient: bool = False) -> dict:
    """The options the site sets on its client, over what the URI says: `DURABLE` (the URI's
    `w` and `journal` give way to it), its timeouts, and `retryWrites=false` unless the URI
    names `retryWrites` itself. Without the driver's retry a write that lost its connection
    fails (503) and the client's retry of the whole request finishes it (every write is
    idempotent), which is all the embedded server can afford: it keeps retryable writes at a
    cost that grows to 10 ms a write command (`tools/embedded_mongo.py`). On a replica set an
    operator may turn them on in the URI: with `DURABLE` writes a retried one is safe (the
    server knows it did it once; what the request wrote before is on a majority)."""
    options = {
        "tz_aware": True,
        "connect": False,
        "w": DURABLE.document["w"],
        "journal": DURABLE.document["j"],
        "serverSelectionTimeoutMS": settings.MONGODB_SERVER_TIMEOUT_MS,
        # Patient, the heartbeat waits too: the embedded server answers no heartbeat while it
        # reads a million ids (67 s), and a heartbeat that times out makes the driver cancel the
        # read in flight (it did, after 18 s).
        "connectTimeoutMS": None if patient else settings.MONGODB_SERVER_TIMEOUT_MS,
        "socketTimeoutMS": None if patient else settings.MONGODB_SOCKET_TIMEOUT_MS,
        "heartbeatFrequencyMS": HEARTBEAT_MS,
    }
    if "retrywrites" not in uri_option_names(uri):
        options["retryWrites"] = False
    return options


def uri_option_names(uri: str) -> set[str]:
    """The names of the options a connection string sets, lower-cased (as MongoDB reads them)."""
    query = urlsplit(uri).query
    return {name.lower() for name, _value in parse_qsl(query.replace(";", "&"))}


def set_client(client: MongoClient | None) -> None:
    """Use another client (tests point this at the embedded server or mongomock); None goes
    back to the process's own, made impatient again (a test's command asked for patience)."""
    global _client, _client_pid, _client_made, _patient
    with _lock:
        _client, _client_pid = client, (os.getpid() if client is not None else None)
        _client_made = False
        _patient = _patient and client is not None
        indexes_ready.clear()


def patient_commands() -> None:
    """For the rest of a bulk command's process, wait for each MongoDB command however long it
    takes, instead of failing after MONGODB_SOCKET_TIMEOUT_MS (which keeps requests answering
    503 within seconds): two million solves into an import, the embedded server held a 5,000-solve
    insert past 20 s. A client given to `set_client` (the tests') is left as it is."""
    global _client, _patient
    with _lock:
        _patient = True
        if _client is not None and _client_made:
            _client.close()
            _client = None


def database() -> Database:
    """The site's database: writes `DURABLE` and reads from the primary whatever the client
    or its URI says (a `readPreference` meant for other programs). What decides whether a
    solve is placed, and the engine's own state (leases, journals, orders), must be read as
    the last acknowledged write left it, never from a secondary that lags behind."""
    return get_client().get_database(
        settings.MONGODB_DB, read_preference=ReadPreference.PRIMARY, write_concern=DURABLE
    )


def database_in_reach() -> Database:
    """The site's database (`database`), once the server is known to be there: a storage fault
    at once while the driver knows it is out of reach, or when it restarted during a request
    that runs on `one_server_life`."""
    db = database()
    _fail_fast_while_unreachable(db.client)
    _check_server_life(db.client)
    return db


# --- one life of the server per request --------------------------------------------------------

_request = threading.local()
_UNSEEN = object()


@contextlib.contextmanager
def one_server_life() -> Iterator[None]:
    """Run a request against one life of the server (API writes that answer for what they did).

    A server that is killed loses the writes it acknowledged last, unless they were journaled;
    one restarted within MONGODB_SERVER_TIMEOUT_MS would let a request carry on from what it
    wrote and read before, and count a solve whose log entry is gone. So once the server is out
    of reach or has restarted, every further use of the database in the request fails as a
    storage fault (503), and the retry starts afresh from what the server kept."""
    _request.life = _UNSEEN
    try:
        yield
    finally:
        del _request.life


def _fail_fast_while_unreachable(client: MongoClient) -> None:
    """Answer a storage fault at once while the driver knows the server is out of reach.

    Without this every request would wait MONGODB_SERVER_TIMEOUT_MS for a server that is not
    there, and on contest day (hundreds of polls a second) the workers' threads all wait, the
    queue grows and the site answers nothing for long after the server is back. The driver's
    monitor keeps looking (every HEARTBEAT_MS), and the first look that finds it ends this."""
    if not isinstance(client, MongoClient):
        return  # mongomock: always there
    servers = client.topology_description.server_descriptions().values()
    if servers and all(server.error is not None for server in servers):
        raise AutoReconnect(f"MongoDB is out of reach: {next(iter(servers)).error}")


def _check_server_life(client: MongoClient) -> None:
    expected = getattr(_request, "life", None)
    if expected is None:
        return  # not in such a request
    current = _server_life(client)
    if expected is _UNSEEN:
        _request.life = current or _UNSEEN  # the driver may still be looking for the server
    elif current != expected:
        raise AutoReconnect("The MongoDB server went away or restarted during this request.")


def _server_life(client: MongoClient) -> object | None:
    """The process id the primary gave the driver (None while the driver looks for it)."""
    description = getattr(client, "topology_description", None)  # mongomock has none
    for server in description.server_descriptions().values() if description else []:
        if server.is_writable and server.topology_version:
            return server.topology_version.get("processId")
    return None

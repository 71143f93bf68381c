"""The MongoDB side: one client per process, the collections, and every index in one place.

Collections:
- ``submissions``: every attempt with its verdict (the audit trail).
- ``solves``: the first accepted solve of each (programmer, problem); a unique key makes it count
  once. The source of truth: every board can be rebuilt from it.
- ``scores``: every scored report (several a programmer and problem, one a request): the log of
  the best-score boards, rebuilt from it as the others are from ``solves``.
- the engine's collections (``entries.<board>``, ``orders``, ``order_sets``, ``appliers``,
  ``group_names``): see `leaderboard.entries`, `.orders` and `.applier`, which alone name them.
  Entries are read by `_id` alone: the index of the seed's query (``keys.$**``), which only
  `rebuild_boards --verify` reads, is made for the length of that check (`indexes_for_a_while`).
- ``problem_stats``: one document per problem, its solver count and its first and latest
  solvers, kept beside the log (see `solvers`, which alone writes their fields);
  ``problem_days``, one index per problem and UTC day, counting its solvers of each minute; and
  ``problem_solvers``, every problem's solvers in solve order, one chunk a minute
  (`solver_pages` reads a page of them).
- ``requests``: API idempotency keys and their first answers.
- ``board_versions``: one counter per board, bumped by every change (see `live`).

Indexes: each app declares its collections' indexes next to them and registers the declaration
here from its `AppConfig.ready()` (`indexes_declare`; `board_indexes_declare` for collections of
each board). `manage.py mongo_indexes` applies every declared index (`indexes_ensure`); and
since correctness must not wait for an operator to run it, each process also creates, once per
client and database and before its first use of the database, the indexes correctness rests on:
unique keys (a re-solve counts nothing) and expiries (keys and locks that must not pile up).
Creating an index that exists is a no-op, so that costs one command per such index, once. Never
at import time: pymongo is not fork-safe.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator
from urllib.parse import parse_qsl, urlsplit

import pymongo
from django.conf import settings
from pymongo import ASCENDING, DESCENDING, IndexModel, MongoClient, ReadPreference, WriteConcern
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import (
    AutoReconnect,
    BulkWriteError,
    ClientBulkWriteException,
    ConnectionFailure,
    ExecutionTimeout,
    OperationFailure,
    PyMongoError,
    WriteConcernError,
)

logger = logging.getLogger(__name__)

# How often the driver looks at the server: after a fault, how soon the site sees it is back.
HEARTBEAT_MS = 1000

_client: MongoClient | None = None
_client_pid: int | None = None
_client_made = False  # whether `_client` is this module's own, not one given to `set_client`
_patient = False  # see `patient_commands`
_lock = threading.Lock()


def get_client() -> MongoClient:
    """The process's client, made on first use (pymongo is not fork-safe: never at import time)."""
    global _client, _client_pid, _client_made
    with _lock:
        if _client is None or _client_pid != os.getpid():
            _client = client_create(settings.MONGODB_URI, patient=_patient)
            _client_pid, _client_made = os.getpid(), True
            _indexes_ready.clear()
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
        _indexes_ready.clear()


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


# How long a clean-up after a failure may take: see `cleanup`.
CLEANUP_SECONDS = 0.5


def cleanup(write: Callable[[], object]) -> None:
    """Run a clean-up write after a failed operation (release a claim or a lease), best effort.

    After a storage fault the clean-up fails too, and the caller's answer (a 503 within seconds)
    must not wait for another server selection: it gets CLEANUP_SECONDS and its errors are
    dropped, so the caller raises its own. What it leaves behind expires by itself."""
    try:
        with pymongo.timeout(CLEANUP_SECONDS):
            write()
    except PyMongoError:
        pass


# Server error codes that pass (pymongo's list for retryable writes): a primary stepping down or
# shutting down, a host out of reach, a network timeout, a time limit, a majority read not yet
# available. pymongo raises most as NotPrimaryError; a bulk or a command may report them bare.
TRANSIENT_CODES = frozenset(
    {6, 7, 89, 91, 134, 189, 262, 9001, 10058, 10107, 11600, 11602, 13435, 13436}
)
# Labels the server or pymongo puts on an error that a retry may not meet.
TRANSIENT_LABELS = ("RetryableWriteError", "TransientTransactionError")


class StorageRefused(PyMongoError):
    """The server refused a write the engine cannot do without (a document too large, say):
    logged where it happens, answered as a storage fault (503) like those that pass, and never
    taken for a conflict between writers."""


def is_transient(error: BaseException) -> bool:
    """Whether `error` is a fault of the storage that passes: the server out of reach or
    changing primary, a write not confirmed by a majority in time (a `WriteConcernError`, e.g.
    `wtimeout`), a time limit, or any error labelled transient. Requests answer it 503
    `storage_unavailable` with Retry-After, and a retry with the same id finishes the work
    (every write is idempotent); anything else (a duplicate key, a bad command) is a bug."""
    if isinstance(error, (ConnectionFailure, WriteConcernError, ExecutionTimeout, StorageRefused)):
        return True
    if isinstance(error, BulkWriteError):
        details = error.details or {}
        return bool(details.get("writeConcernErrors")) and not details.get("writeErrors")
    if isinstance(error, ClientBulkWriteException):
        if error.error is not None:
            return is_transient(error.error)
        return bool(error.write_concern_errors) and not error.write_errors
    if not isinstance(error, PyMongoError):
        return False
    if error.timeout or any(error.has_error_label(label) for label in TRANSIENT_LABELS):
        return True
    return isinstance(error, OperationFailure) and error.code in TRANSIENT_CODES


def _database() -> Database:
    """The site's database: writes `DURABLE` and reads from the primary whatever the client
    or its URI says (a `readPreference` meant for other programs). What decides whether a
    solve is placed, and the engine's own state (leases, journals, orders), must be read as
    the last acknowledged write left it, never from a secondary that lags behind."""
    return get_client().get_database(
        settings.MONGODB_DB, read_preference=ReadPreference.PRIMARY, write_concern=DURABLE
    )


def get_db() -> Database:
    """The site's database, with the indexes correctness rests on (made on first use)."""
    db = _database()
    _fail_fast_while_unreachable(db.client)
    _check_server_life(db.client)
    if db.name not in _indexes_ready:
        _indexes_ensure_at_first_use(db)
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


def submissions() -> Collection:
    return get_db()["submissions"]


def solves() -> Collection:
    return get_db()["solves"]


def scores() -> Collection:
    """Every scored report (``{programmer_id, problem, score, solved_at, request, applied}``),
    the log of the best-score boards: several a (programmer, problem), one a request."""
    return get_db()["scores"]


def requests() -> Collection:
    return get_db()["requests"]


def import_ids() -> Collection:
    """The ids of the lines `import_solves` logged (``{_id: "import:<id>", body_hash, counted}``),
    kept for good: a file imported again a year later still changes nothing. Not in `requests`,
    whose expiry the embedded server enforces by reading every one of its documents each minute
    under its global lock (minutes at a million programmers' history)."""
    return get_db()["import_ids"]


def problem_stats() -> Collection:
    return get_db()["problem_stats"]


def problem_days() -> Collection:
    """Every problem's index of each UTC day: its solvers of each minute (see `solvers`)."""
    return get_db()["problem_days"]


def problem_solvers() -> Collection:
    """Every problem's solvers, a chunk a UTC minute (see `solvers`)."""
    return get_db()["problem_solvers"]


def board_versions() -> Collection:
    return get_db()["board_versions"]


# `$in` on `_id` read in pieces of this many: the embedded server checks every document it finds
# against the whole list, so one read of n ids that all exist costs n² (5,000 took 25 s, 100 at a
# time 1 s); ids that do not exist cost almost nothing either way. Reading 30-day entries back,
# 25 a read cost about half what 100 did, and 10 little less than 25 for more commands
# (`python -m tools.server_costs` measures all three).
IDS_PER_READ = 25


def find_by_ids(collection: Collection, ids: list, projection: dict | None = None) -> Iterator:
    """The documents of `collection` with these `_id`s (those that exist), read in pieces."""
    for start in range(0, len(ids), IDS_PER_READ):
        yield from collection.find({"_id": {"$in": ids[start : start + IDS_PER_READ]}}, projection)


def fixed_indexes() -> dict[str, list[IndexModel]]:
    """The indexes of the fixed collections of `solutions`."""
    return {
        "submissions": [
            IndexModel([("programmer_id", ASCENDING), ("submitted_at", DESCENDING)]),
            IndexModel([("submitted_at", DESCENDING)]),
        ],
        # Idempotency keys outlive any retry worth answering: a solve older than the late
        # limit (30 days by default) is refused anyway.
        "requests": [IndexModel([("claimed_at", ASCENDING)], expireAfterSeconds=45 * 86400)],
        "solves": [
            # A programmer solves a problem once: a re-solve is refused by this key.
            # Also every read of the log: a programmer's solves, a range of programmers'.
            IndexModel([("programmer_id", ASCENDING), ("problem", ASCENDING)], unique=True),
            # Who solved on a day: the programmers a new day moves (`leaderboard.day_change`),
            # one range of a day's solves.
            IndexModel([("solved_at", ASCENDING)]),
            IndexModel([("applied", ASCENDING)], partialFilterExpression={"applied": False}),
            # The moves of problem counts a crash left unfinished (see `solvers`): only solves
            # with a move under way have the field.
            IndexModel([("problem_move_at", ASCENDING)], sparse=True),
            # The held solves, which the release walks every minute (see `holds`): only they
            # have the field, and only while a competition is frozen or just ended.
            IndexModel([("held_until", ASCENDING)], sparse=True),
        ],
        "scores": [
            # A report counts once whatever its retries: one a request (the judge's key).
            IndexModel([("request", ASCENDING)], unique=True),
            # A programmer's reports (refresh, rebuild), a range of programmers'.
            IndexModel([("programmer_id", ASCENDING), ("solved_at", ASCENDING)]),
            # Who reported on a day: the programmers a new day moves (`day_change`).
            IndexModel([("solved_at", ASCENDING)]),
            IndexModel([("applied", ASCENDING)], partialFilterExpression={"applied": False}),
        ],
    }


def ensure_indexes(board_slugs: list[str]) -> list[str]:
    """Create the indexes of every collection declared for first use and of these boards
    (idempotent: existing ones are left as they are). Returns their names. For the callers that
    add boards; `indexes_ensure` applies every declaration."""
    declared = indexes_declared(at_first_use_only=True)
    for declaration in _board_declarations:
        declared = {**declared, **declaration(board_slugs)}
    return _indexes_apply(_database(), declared)


# --- the index registry ------------------------------------------------------------------------

IndexDeclaration = Callable[[], dict[str, list[IndexModel]]]
"""`fn() -> {collection name: [IndexModel, ...]}`: the indexes an app's collections need."""

BoardIndexDeclaration = Callable[..., dict[str, list[IndexModel]]]
"""`fn(board_slugs=None) -> {collection name: [IndexModel, ...]}`: the indexes of these boards'
collections, or of every board (listed from SQL) when called with none."""

_declarations: dict[IndexDeclaration, bool] = {}  # declaration -> applied at first use
_board_declarations: list[BoardIndexDeclaration] = []  # also in `_declarations`, for every board
_indexes_ready: set[str] = set()  # databases whose first-use indexes the current client made
_indexes_lock = threading.Lock()


class IndexesMissing(RuntimeError):
    """An index correctness rests on could not be created: writes would not be safe."""


def indexes_declare(declaration: IndexDeclaration, *, at_first_use: bool = True) -> None:
    """Register an app's index declaration (from its `AppConfig.ready()`; again is a no-op).

    `at_first_use`: each process calls it before its first use of the database and creates its
    unique and expiring indexes. Pass False for a declaration that must not run then (it reads
    SQL, or builds nothing correctness rests on): only `indexes_ensure` applies it."""
    _declarations[declaration] = at_first_use


def board_indexes_declare(declaration: BoardIndexDeclaration) -> None:
    """Register the indexes of an app's collections of each board (from its `AppConfig.ready()`;
    again is a no-op): `indexes_ensure` applies them for every board, `ensure_indexes` for the
    boards it is given. Never at first use: the boards are listed from SQL."""
    if declaration not in _board_declarations:
        _board_declarations.append(declaration)
    indexes_declare(declaration, at_first_use=False)


def indexes_declared(*, at_first_use_only: bool = False) -> dict[str, list[IndexModel]]:
    """Every registered declaration merged: {collection name: [IndexModel, ...]}."""
    merged: dict[str, list[IndexModel]] = {}
    for declaration, at_first_use in _declarations.items():
        if at_first_use or not at_first_use_only:
            for name, models in declaration().items():
                merged.setdefault(name, []).extend(models)
    return merged


def indexes_ensure() -> list[str]:
    """Create every declared index (idempotent). Returns their names, `collection.index`."""
    return _indexes_apply(_database(), indexes_declared())


def server_uses_wildcard_indexes() -> bool:
    """Whether the server answers queries from wildcard indexes (``path.$**``). Real MongoDB
    does. The embedded server (SecantusDB 0.7, which names its version in `buildInfo`) keeps
    such an index as an index of a literal field no document has: no query reads it, and every
    document written to its collection pays an index key for it (70 to 90 µs an entry)."""
    return "secantusVersion" not in get_db().client.server_info()


def index_is_essential(model: IndexModel) -> bool:
    """Whether correctness rests on the index: a unique key, or an expiry."""
    return bool(model.document.get("unique")) or "expireAfterSeconds" in model.document


def indexes_set_aside(collection: Collection) -> list[IndexModel]:
    """Drop the collection's indexes that correctness does not rest on, and return them to be
    made again (`collection.create_indexes`) after a bulk load: the embedded server's cost of
    each document written grows with every index, and it builds an index over a whole
    collection in a fraction of that. One left dropped by a crash comes back with
    `manage.py mongo_indexes` (the web process runs it at each start)."""
    aside = []
    for info in collection.list_indexes():
        options = {k: v for k, v in info.items() if k not in ("key", "v", "ns")}
        model = IndexModel(list(info["key"].items()), **options)
        if info["name"] != "_id_" and not index_is_essential(model):
            aside.append(model)
    for model in aside:
        collection.drop_index(model.document["name"])
    return aside


INDEX_BUILD_SECONDS = 3600  # over millions of documents the embedded server takes minutes


@contextlib.contextmanager
def indexes_for_a_while(declared: dict[str, list[IndexModel]]) -> Iterator[list[str]]:
    """These indexes for the length of the block, for a command that reads what no request
    does: those missing are built (however long it takes) and dropped after it, so that writes
    pay for them only meanwhile; one that was there before stays. Yields the names of those
    built, `collection.index`."""
    db, built = _database(), []
    try:
        with pymongo.timeout(INDEX_BUILD_SECONDS):
            for name, models in declared.items():
                there = set(db[name].index_information())
                for model in models:
                    if model.document["name"] not in there:
                        db[name].create_indexes([model])
                        built.append((name, model.document["name"]))
        yield [f"{name}.{index}" for name, index in built]
    finally:
        for name, index in built:
            db[name].drop_index(index)


def indexes_restore(collection: Collection, models: list[IndexModel]) -> None:
    """Make again the indexes `indexes_set_aside` returned, however long it takes."""
    if models:
        with pymongo.timeout(INDEX_BUILD_SECONDS):
            collection.create_indexes(models)


def _indexes_apply(db: Database, declared: dict[str, list[IndexModel]]) -> list[str]:
    names = [
        f"{name}.{index}"
        for name, models in declared.items()
        for index in db[name].create_indexes(models)
    ]
    _indexes_ready.add(db.name)  # a superset of the first-use indexes
    return names


def _indexes_ensure_at_first_use(db: Database) -> None:
    """The unique and expiring indexes of every first-use declaration, once per client and
    database (threads of one process wait for the first)."""
    with _indexes_lock:
        if db.name in _indexes_ready:
            return
        for name, models in indexes_declared(at_first_use_only=True).items():
            for model in filter(index_is_essential, models):
                _index_create(db[name], model)
        _indexes_ready.add(db.name)


def _index_create(collection: Collection, model: IndexModel) -> None:
    """Create one index. One that exists with other options (an expiry changed in the settings)
    is left for the command to report; a unique key that cannot be made stops everything."""
    try:
        collection.create_indexes([model])
    except OperationFailure as error:
        if model.document.get("unique") and not _has_unique_index(collection, model):
            raise IndexesMissing(
                f"The unique index {model.document['name']} on {collection.name} could not be "
                f"created ({error}); run `manage.py mongo_indexes` and fix what it reports."
            ) from error
        logger.warning("Index %s on %s: %s", model.document["name"], collection.name, error)


def _has_unique_index(collection: Collection, model: IndexModel) -> bool:
    keys = list(model.document["key"].items())
    return any(
        info.get("unique") and list(info["key"]) == keys
        for info in collection.index_information().values()
    )


DUPLICATE_KEY = 11000


def conflict_or_fault(
    error: BulkWriteError | ClientBulkWriteException, conflict: type[Exception], message: str
) -> Exception:
    """What a refused bulk of compare-and-swaps means: duplicate keys alone are a `conflict`
    between writers (to try again); a fault that passes is itself; anything else (a document
    too large, a bad update) would be refused again, so it is logged and becomes a storage fault
    (`StorageRefused`, a 503), never taken for a conflict and swallowed."""
    if only_duplicates(error):
        return conflict(message)
    if is_transient(error):
        return error
    logger.error("the storage refused a write: %s", getattr(error, "details", error))
    return StorageRefused(f"the storage refused a write: {error}")


def namespace(collection: Collection) -> str:
    """ "database.collection", as a write sent with others names its collection."""
    return f"{collection.database.name}.{collection.name}"


def write_together(writes: list) -> None:
    """Send writes to several collections (each model naming its `namespace`) as one ordered
    command (`bulkWrite`, MongoDB 8.0), durable like every write of the site: each runs only if
    every one before it did, so a compare-and-swap put first (an upsert that meets a duplicate
    key when the version it expects is gone) stops the rest."""
    if writes:
        get_db().client.bulk_write(writes, ordered=True, write_concern=DURABLE)


def only_duplicates(error: BulkWriteError | ClientBulkWriteException) -> bool:
    """Whether every write a bulk refused was refused for a duplicate key (an insert that found
    its document there, or a compare-and-swap whose upsert did): the conflicts the engine
    expects, as opposed to a document too large, a bad update or any other fault."""
    if isinstance(error, BulkWriteError):
        errors, concern = error.details.get("writeErrors"), error.details.get("writeConcernErrors")
    else:
        if error.error is not None:  # the command itself failed (a network error, say)
            return False
        errors, concern = error.write_errors, error.write_concern_errors
    return bool(errors) and not concern and all(e.get("code") == DUPLICATE_KEY for e in errors)


def raise_unless_duplicates(error: BulkWriteError | ClientBulkWriteException) -> None:
    """Re-raise a bulk's error unless all it refused were duplicate keys (see `only_duplicates`)."""
    if not only_duplicates(error):
        raise error

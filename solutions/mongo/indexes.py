"""The index registry, and indexes for a while.

Each app declares its collections' indexes next to them and registers the declaration
here from its `AppConfig.ready()` (`indexes_declare`; `board_indexes_declare` for collections of
each board). `manage.py mongo_indexes` applies every declared index (`indexes_ensure`); and
since correctness must not wait for an operator to run it, each process also creates, once per
client and database and before its first use of the database, the indexes correctness rests on:
unique keys (a re-solve counts nothing) and expiries (keys and locks that must not pile up).
Creating an index that exists is a no-op, so that costs one command per such index, once. Never
at import time: pymongo is not fork-safe.

Around bulk loads, the indexes correctness does not rest on are set aside and made again after
(`indexes_set_aside`, `indexes_restore`); a command that reads what no request does has its
indexes only for its length (`indexes_for_a_while`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator

import pymongo
from pymongo import IndexModel
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import OperationFailure

from .client import database, get_client, indexes_ready

logger = logging.getLogger(__name__)


def ensure_indexes(board_slugs: list[str]) -> list[str]:
    """Create the indexes of every collection declared for first use and of these boards
    (idempotent: existing ones are left as they are). Returns their names. For the callers that
    add boards; `indexes_ensure` applies every declaration."""
    declared = indexes_declared(at_first_use_only=True)
    for declaration in _board_declarations:
        declared = {**declared, **declaration(board_slugs)}
    return _indexes_apply(database(), declared)


# --- the index registry ------------------------------------------------------------------------

IndexDeclaration = Callable[[], dict[str, list[IndexModel]]]
"""`fn() -> {collection name: [IndexModel, ...]}`: the indexes an app's collections need."""

BoardIndexDeclaration = Callable[..., dict[str, list[IndexModel]]]
"""`fn(board_slugs=None) -> {collection name: [IndexModel, ...]}`: the indexes of these boards'
collections, or of every board (listed from SQL) when called with none."""

_declarations: dict[IndexDeclaration, bool] = {}  # declaration -> applied at first use
_board_declarations: list[BoardIndexDeclaration] = []  # also in `_declarations`, for every board
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
    return _indexes_apply(database(), indexes_declared())


def server_uses_wildcard_indexes() -> bool:
    """Whether the server answers queries from wildcard indexes (``path.$**``). Real MongoDB
    does. The embedded server (SecantusDB 0.7, which names its version in `buildInfo`) keeps
    such an index as an index of a literal field no document has: no query reads it, and every
    document written to its collection pays an index key for it (70 to 90 µs an entry)."""
    return "secantusVersion" not in get_client().server_info()


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
    db, built = database(), []
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
    indexes_ready.add(db.name)  # a superset of the first-use indexes
    return names


def indexes_ensure_at_first_use(db: Database) -> None:
    """The unique and expiring indexes of every first-use declaration, once per client and
    database (threads of one process wait for the first)."""
    if db.name in indexes_ready:
        return
    with _indexes_lock:
        if db.name in indexes_ready:
            return
        for name, models in indexes_declared(at_first_use_only=True).items():
            for model in filter(index_is_essential, models):
                _index_create(db[name], model)
        indexes_ready.add(db.name)


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

"""Faults, told apart: one of the storage that passes (the server out of reach, a primary
changing, a write not confirmed in time), answered 503 `storage_unavailable` and finished by the
client's retry (every write is idempotent); a conflict between writers (duplicate keys, which the
engine expects and tries again); and a write the server refuses for good (`StorageRefused`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pymongo
from pymongo.errors import (
    BulkWriteError,
    ClientBulkWriteException,
    ConnectionFailure,
    ExecutionTimeout,
    OperationFailure,
    PyMongoError,
    WriteConcernError,
)

logger = logging.getLogger(__name__)

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

"""The MongoDB side: one client per process, the collections, and every index in one place.

Everyone uses it as ``from solutions import mongo; mongo.solves()``; behind that, by concern:

- `client`: the process's one client (made lazily: pymongo is not fork-safe), the options the
  site sets over its URI (`DURABLE` writes, timeouts, no driver retries unless asked), and the
  database as a request sees it (a fault at once while the server is out of reach, one life of
  the server per request: `one_server_life`).
- `faults`: what a failure means: a storage fault that passes (`is_transient`, a 503 and a
  retry), a conflict between writers (`only_duplicates`), or a write refused for good
  (`StorageRefused`); `cleanup` after one.
- `indexes`: the registry every app declares its indexes to, applied by `manage.py
  mongo_indexes` and, for those correctness rests on, at each process's first use; indexes set
  aside around bulk loads, or made for the length of one command.
- `database`: `get_db`, the fixed collections of `solutions` and their indexes, reads and
  deletes by many `_id`s in pieces of MONGODB_IDS_PER_READ (the embedded server's `$in` costs
  the square of its ids), and `write_together` (one ordered command over several collections).

This package imports nothing from the engine (`solutions.leaderboard`), which registers its
boards' indexes here.
"""

from __future__ import annotations

from .client import (
    DURABLE,
    HEARTBEAT_MS,
    client_create,
    client_options,
    get_client,
    one_server_life,
    patient_commands,
    set_client,
    uri_option_names,
)
from .database import (
    board_versions,
    delete_by_ids,
    find_by_ids,
    fixed_indexes,
    get_db,
    id_parts,
    ids_per_read,
    import_ids,
    namespace,
    problem_days,
    problem_solvers,
    problem_stats,
    requests,
    scores,
    solves,
    submissions,
    write_together,
)
from .faults import (
    CLEANUP_SECONDS,
    DUPLICATE_KEY,
    TRANSIENT_CODES,
    TRANSIENT_LABELS,
    StorageRefused,
    cleanup,
    conflict_or_fault,
    is_transient,
    only_duplicates,
    raise_unless_duplicates,
)
from .indexes import (
    INDEX_BUILD_SECONDS,
    BoardIndexDeclaration,
    IndexDeclaration,
    IndexesMissing,
    board_indexes_declare,
    ensure_indexes,
    index_is_essential,
    indexes_declare,
    indexes_declared,
    indexes_ensure,
    indexes_for_a_while,
    indexes_restore,
    indexes_set_aside,
    server_uses_wildcard_indexes,
)

__all__ = [
    "CLEANUP_SECONDS",
    "DUPLICATE_KEY",
    "DURABLE",
    "HEARTBEAT_MS",
    "INDEX_BUILD_SECONDS",
    "TRANSIENT_CODES",
    "TRANSIENT_LABELS",
    "BoardIndexDeclaration",
    "IndexDeclaration",
    "IndexesMissing",
    "StorageRefused",
    "board_indexes_declare",
    "board_versions",
    "cleanup",
    "client_create",
    "client_options",
    "conflict_or_fault",
    "delete_by_ids",
    "ensure_indexes",
    "find_by_ids",
    "fixed_indexes",
    "get_client",
    "get_db",
    "id_parts",
    "ids_per_read",
    "import_ids",
    "index_is_essential",
    "indexes_declare",
    "indexes_declared",
    "indexes_ensure",
    "indexes_for_a_while",
    "indexes_restore",
    "indexes_set_aside",
    "is_transient",
    "namespace",
    "one_server_life",
    "only_duplicates",
    "patient_commands",
    "problem_days",
    "problem_solvers",
    "problem_stats",
    "raise_unless_duplicates",
    "requests",
    "scores",
    "server_uses_wildcard_indexes",
    "set_client",
    "solves",
    "submissions",
    "uri_option_names",
    "write_together",
]

"""The order's documents as the store keeps them, and their BSON size.

Nodes are kept as the documents the store writes (`node_document`, the fields of
`order_documents.manifest_document` with the `_id`) and decoded as
`order_documents.manifest_decode` decodes them; `bson_size` counts their bytes without encoding
them, as the bench counts millions of them.
"""

from __future__ import annotations

from solutions.leaderboard import order_documents, sets

ORDER = "bench|20000|"  # the `_id` of the order's root, as `orders.order_id` names it
# What a reader asks of the root for a page or a place (`order_documents.PAGE`, with the journal
# epoch), of the nodes below it (the same but the histogram), and of the root for a rank
# (`order_documents.HISTOGRAM`).
NODE_FIELDS = ("_id", "v", "lvl", "ids", "vers", "lens", "lasts", "inline", "arrivals", "folded")
PAGE_FIELDS = (*NODE_FIELDS, "hist")
HISTOGRAM_FIELDS = ("_id", "hist", "folded")


def bson_size(document: dict) -> int:
    """The size of a document as BSON encodes it (the values the store uses: strings, ints,
    binaries, None and lists), computed without encoding it."""
    return 5 + sum(2 + len(name.encode()) + _value_size(v) for name, v in document.items())


def _value_size(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return 4 if -(2**31) <= value < 2**31 else 8
    if isinstance(value, str):
        return 5 + len(value.encode())
    if isinstance(value, bytes | bytearray):
        return 5 + len(value)
    if isinstance(value, list):
        return bson_size({str(i): v for i, v in enumerate(value)})
    if isinstance(value, dict):
        return bson_size(value)
    raise TypeError(f"no BSON size for {type(value).__name__}")


def node_document(doc_id: str, node: sets.Manifest) -> dict:
    """A node (or the root) as stored: `order_documents.manifest_document` with its `_id`."""
    return {"_id": doc_id, **order_documents.manifest_document(node)}


def node_decode(document: dict) -> sets.Manifest:
    """A node from the fields read, as the store decodes it."""
    return order_documents.manifest_decode(document)


def set_document(set_id: int, version: int, blob: bytes) -> dict:
    return {"_id": f"{ORDER}|{set_id}", "v": version, "r": blob}


def set_version_document(set_id: int) -> dict:
    """What a fold reads of a set it may leave by a gone list: its version and gone count."""
    return {"_id": f"{ORDER}|{set_id}", "v": 1, "n": 0}


def gone_update(set_id: int, version: int, records: list[bytes]) -> dict:
    """The update that lists records as gone beside a set's own (`orders`), as it is sent."""
    change = {
        "$set": {"v": version},
        "$push": {"g": {"$each": records}},
        "$inc": {"n": len(records)},
    }
    return {"q": {"_id": f"{ORDER}|{set_id}", "v": version - 1}, "u": change}

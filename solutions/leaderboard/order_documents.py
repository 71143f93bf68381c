"""An order as MongoDB stores it: the columns of a manifest's document, and a set's records.

A manifest (a root in ``orders``, a node of its tree in ``order_sets``, see `tree`) is stored as
one binary value per column of its entries, so that a reader asks for the columns it needs and
nothing else: a page or a place the columns of `PAGE`, a rank only the histogram (`HISTOGRAM`),
a node below the root the columns of `NODE` (below the root nobody ranks). A set is stored as its
sorted records (``r``) and the records the fold has since listed as gone (``g``, see `moving`);
readers and writers take it through `set_records`.

Why a module of its own: what a document holds is one concept, shared by the store (`orders`,
`journals`, `reading`) and the structure bench, which encodes the same documents in memory.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from bson import Binary

from . import encoding, sets

# What each reader asks of a manifest: a page or a place needs the sets' lengths and last members
# (the journal's moves are laid into the sets by them), a rank only the histogram; writers read
# it all.
PAGE = {
    **{"v": 1, "lvl": 1, "ids": 1, "vers": 1, "lens": 1, "lasts": 1, "hist": 1},
    **{"inline": 1, "arrivals": 1},
}
HISTOGRAM = {"hist": 1}
NODE = {field: 1 for field in PAGE if field != "hist"}  # below the root, nobody ranks


def manifest_decode(document: dict | None) -> sets.Manifest:
    """A manifest from its stored columns (see `manifest_document`), as far as they were read."""
    if document is None:
        return sets.Manifest()
    histogram, shift = encoding.histogram_unpack(document.get("hist", b""))
    manifest = sets.Manifest(
        version=document.get("v", 0),
        ids=document.get("ids", b""),
        versions=document.get("vers", b""),
        lengths=document.get("lens", b""),
        lasts=document.get("lasts"),
        score_counts=document.get("nscores"),
        score_pairs=_score_pairs(document),
        histogram=histogram,
        shift=shift,
        trash=_ids_unpack(document.get("trash", b"")),
        arrivals=_arrivals_unpack(document.get("arrivals", b"")),
        level=document.get("lvl", 0),
    )
    manifest.folded = document.get("folded", -1)
    if document.get("inline") is not None and len(manifest) == 1:
        only = manifest.set_id(0)
        manifest.inline = {only: (manifest.set_version(0), bytes(document["inline"]))}
    return manifest


def _score_pairs(document: dict) -> bytes:
    """The score counts of a manifest's entries: 8 bytes a pair, or 6 in a manifest written
    before nodes counted more members than two bytes hold (widened as it is read)."""
    if "pairs" in document:
        return document["pairs"]
    narrow = struct.iter_unpack(">IH", document.get("scores", b""))
    return b"".join(encoding.SCORE.pack(score, members) for score, members in narrow)


def _ids_unpack(packed: bytes | list[int]) -> list[int]:
    """Set and node ids packed 8 bytes each (a list of numbers in documents of earlier code)."""
    if isinstance(packed, list):
        return packed
    return [int.from_bytes(packed[i : i + 8], "big") for i in range(0, len(packed), 8)]


def _arrivals_unpack(packed: bytes) -> Iterator[tuple[bytes, int]]:
    width = 8 + encoding.RECORD_BYTES
    for i in range(0, len(packed), width):
        yield packed[i + 8 : i + width], int.from_bytes(packed[i : i + 8], "big")


def _arrivals_pack(arrivals: dict[bytes, int]) -> bytes:
    return b"".join(arrivals[r].to_bytes(8, "big") + r for r in sorted(arrivals))


def manifest_document(manifest: sets.Manifest) -> dict:
    """A manifest as stored (a root, or a node of the tree, see `tree`): its level, one binary
    value for each column of its entries (id, version, length, separator of the last member,
    number of score counts), their score counts, the histogram (after the mark of its shift when
    coarse, see `sets.Manifest`), the records of a small order's
    one set, the ids (8 bytes each) of the sets and nodes to delete once no reader can still be
    on their way to them, and the arrivals (each with the id of its set)."""
    inline = next(iter(manifest.inline.values()), None)
    return {
        "v": manifest.version,
        "lvl": manifest.level,
        "ids": Binary(bytes(manifest.ids)),
        "vers": Binary(bytes(manifest.versions)),
        "lens": Binary(bytes(manifest.lengths)),
        "lasts": Binary(bytes(manifest.lasts or b"")),
        "nscores": Binary(bytes(manifest.score_counts)),
        "pairs": Binary(bytes(manifest.score_pairs)),
        "hist": Binary(encoding.histogram_pack(manifest.histogram, manifest.shift)),
        "inline": Binary(inline[1]) if inline else None,
        "trash": Binary(b"".join(set_id.to_bytes(8, "big") for set_id in manifest.trash)),
        "arrivals": Binary(_arrivals_pack(manifest.arrivals)),
        "folded": manifest.folded,
    }


def set_records(document: dict) -> bytes:
    """A set's records as readers and writers take them: those its document holds, less the
    records it lists as gone (``g``, see `moving`)."""
    blob = bytes(document["r"])
    if not document.get("g"):
        return blob
    gone = {bytes(record) for record in document["g"]}
    return b"".join(record for record in encoding.records_of(blob) if record not in gone)

"""A board's journal laid over a manifest (`sets.Manifest.journal_lay`), as a reader does: the
sets' lengths, the histogram and the members each set yields agree with the listing computed
from scratch, on random boards and random moves."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from solutions.leaderboard import encoding, moving, sets
from tests.support.sets import journal_pairs, member


def listing(manifest: sets.Manifest, stored: dict[int, bytes]) -> list[bytes]:
    """What a reader gets set after set: the written records without the departures, with the
    arrivals (as `reading._records` reads them)."""
    records = []
    for index in range(len(manifest)):
        set_id = manifest.set_id(index)
        blob = stored.get(set_id, manifest.inline.get(set_id, (0, b""))[1])
        departed = manifest.departures_of(set_id)
        written = [r for r in encoding.records_of(blob) if r not in departed]
        records += sorted(written + manifest.arrivals_of(set_id))
    return records


@pytest.mark.parametrize("seed", range(8))
def test_a_journal_laid_over_a_manifest_lists_what_the_moves_make(seed):
    rng = random.Random(seed)
    held = {pid: member(rng, pid) for pid in range(rng.randrange(0, 60))}
    manifest, rewrite = moving.sets_build(sorted(held.values()), fill=rng.choice([2, 5, 16]))
    stored = {set_id: blob for set_id, (_v, blob) in rewrite.written.items()}
    pairs, now = journal_pairs(rng, held, member, ids=80, moving=30)
    # A reader asks for the sets' lengths and last members (a page), or the histogram only.
    page = sets.Manifest(
        version=manifest.version,
        ids=manifest.ids,
        versions=manifest.versions,
        lengths=manifest.lengths,
        lasts=manifest.lasts,
        score_counts=None,
        histogram=manifest.histogram,
    )
    page.journal_lay(pairs)
    expected = sorted(now.values())
    assert listing(page, stored) == expected
    assert sum(page.set_lengths()) == len(expected)
    assert page.histogram == Counter(encoding.record_score(r) for r in expected)
    for record in expected:  # every member is found in the set its sort bytes point to
        index = page.set_for(record)
        assert record in listing(page, stored)[page.offset_of_set(index) :][: page.length(index)]
    rank_only = sets.Manifest(histogram=manifest.histogram, lasts=None)
    rank_only.journal_lay(pairs)
    assert rank_only.histogram == page.histogram

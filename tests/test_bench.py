"""`manage.py bench`: the MongoDB commands of every board read and of a solve do not grow with
the board (counted with pymongo's command monitoring, not timed)."""

from __future__ import annotations

import re
from io import StringIO

import pytest
import redis
from django.core.management import call_command
from pymongo import MongoClient

from solutions.management.commands.bench import bench_run
from tests.services_available import REDIS_URL, require_redis

pytestmark = pytest.mark.slow


def counts(results, size: int) -> dict[str, int]:
    return {result.operation: result.commands for result in results if result.programmers == size}


def test_reads_and_solves_cost_the_same_commands_at_200_and_2000_programmers(
    embedded_server, db, settings
):
    settings.MONGODB_DB = "leaderboard_test"
    results = bench_run(uri=embedded_server.uri, sizes=[200, 2000], repeat=1, report=lambda _: None)
    small, large = counts(results, 200), counts(results, 2000)
    # Every read is the board's journal (the part of that day), the day's manifest, plus at most
    # one read of sets by `_id`, at any offset (a group of at most 128 keeps its members inside
    # its manifest: two reads).
    for page in ("page 1", "middle page", "last page", "group page"):
        assert small[page] <= 3 and large[page] <= 3, page
    assert small["rank"] == large["rank"] == 3  # the entry, the journal and the histogram
    assert small["around me (4)"] == large["around me (4)"] <= 7
    assert small["profile"] == large["profile"]
    # The board page as a visitor gets it: built from nothing (the cache cleared), then from the
    # cache with no MongoDB command at all.
    assert small["top page (first build)"] == large["top page (first build)"] <= 7
    assert small["top page (cached)"] == large["top page (cached)"] == 0
    # A solve (the bench's programmer solving again): the log and each board's entry; the lease,
    # listing them as pending; each board's entry read; the journals of every board at once
    # with the histograms of the groups' orders it moves, for the groups' ranklists (two reads
    # of at most 40 ids, one write: no manifest and no set); each board's record of what the
    # orders hold; the lease back; the live counters and the "applied" mark. Before the boards,
    # the problem's solver count (`solvers`): its document, then the solve marked counted.
    journals = 2 + 1
    problem_count = 2
    assert (
        small["solve (3 boards)"]
        == large["solve (3 boards)"]
        == 1 + problem_count + 3 + 1 + 3 + journals + 3 + 1 + 2
    )
    # A search by the start of a handle: the day's histogram (journal, manifest) and one `$in`
    # of the 20 listed entries, whatever the board's size (its SQL queries are in the detail).
    assert small["prefix search (API)"] == large["prefix search (API)"] == 3
    # Another programmer each time costs the same, until a journal is full and folded.
    assert small["solve, another each time"] == large["solve, another each time"] == 19
    # The year on a profile reads the programmer's own solves; the problems' solver counts and
    # a problem's solvers are one read of their `problem_stats` documents: at any size.
    for operation in ("year and streaks", "problems with solver counts", "a problem's solvers"):
        assert small[operation] == large[operation] <= 1, operation
    # Groups ranked against each other: the ranklist's journal part, manifest and at most one
    # read of sets, then the groups' names; when a tie runs on from the page before, three more
    # reads to find where it starts.
    assert small["countries ranked"] <= 4 and large["countries ranked"] <= 4
    for size in (small, large):
        assert size["organizations, middle page (API)"] in (3, 4, 6, 7)
    # The server's own account (explain) of the documents the reads examined: no read scans.
    # (A group of 200 fits inside its manifest: one document, not two.)
    examined = {r.operation: r.examined for r in results if r.programmers == 200}
    examined_large = {r.operation: r.examined for r in results if r.programmers == 2000}
    assert examined.pop("group page") <= examined_large.pop("group page") <= 2
    # The ranklists: at most the journal, the manifest and a set twice, and the page's names.
    for each in (examined, examined_large):
        assert each.pop("countries ranked") <= 2 + 6  # six countries at most, named
        assert each.pop("organizations, middle page (API)") <= 6 + 25
    assert examined == examined_large
    assert all(examined[page] <= 2 for page in ("page 1", "middle page", "last page", "rank"))
    # The scratch database is gone afterwards.
    with MongoClient(embedded_server.uri) as client:
        assert "leaderboard_test_bench" not in client.list_database_names()


def test_the_command_prints_a_table_of_commands_and_times(embedded_server, db, settings):
    settings.MONGODB_DB = "leaderboard_test"
    out = StringIO()
    call_command(
        "bench", "--programmers", "30,60", "--repeat", "1", "--uri", embedded_server.uri, stdout=out
    )
    lines = out.getvalue().splitlines()
    assert any("programmers" in line and "commands" in line for line in lines)
    rows = [line for line in lines if re.match(r"\s*(30|60)  \w", line)]
    assert len(rows) == 34  # seventeen operations at two sizes
    steady = "Same number of commands at every size: top page (first build), top page (cached)"
    assert steady in lines[-1]


def test_the_same_reads_and_solve_are_measured_on_redis_sorted_sets(embedded_server, db, settings):
    require_redis()
    settings.MONGODB_DB = "leaderboard_test"
    url = REDIS_URL.rsplit("/", 1)[0] + "/13"
    results = bench_run(
        uri=embedded_server.uri, sizes=[50], repeat=1, report=lambda _: None, redis_url=url
    )
    on_redis = {result.operation for result in results if result.redis is not None}
    assert on_redis == {
        "page 1",
        "middle page",
        "last page",
        "rank",
        "around me (4)",
        "solve (3 boards)",
    }
    assert redis.Redis.from_url(url).keys("bench:*") == []  # the sorted sets are gone afterwards

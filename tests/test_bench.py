"""`manage.py bench`: the MongoDB commands of a rank lookup, the top page, "around me" and a solve
do not grow with the board (counted with pymongo's command monitoring, not timed)."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from pymongo import MongoClient

from solutions.management.commands.bench import bench_run

pytestmark = pytest.mark.slow


def counts(results, size: int) -> dict[str, int]:
    return {result.operation: result.commands for result in results if result.programmers == size}


def test_reads_and_solves_cost_the_same_commands_at_200_and_2000_programmers(
    embedded_server, db, settings
):
    settings.MONGODB_DB = "leaderboard_test"
    results = bench_run(uri=embedded_server.uri, sizes=[200, 2000], repeat=1, report=lambda _: None)
    small, large = counts(results, 200), counts(results, 2000)
    assert small["rank lookup"] == large["rank lookup"] == 2  # the entry and the histogram
    assert small["board page 1"] == large["board page 1"] == 2  # the histogram and the top page
    assert small["around me (4)"] == large["around me (4)"]
    # A solve writes the entry, the rank data and, when it changes them, the cached top pages of
    # the programmer's scopes (everybody, their country): whether it changes them depends on the
    # scores, not on the size, so the count is bounded rather than equal.
    per_board = 1 + 1 + 1 + 2  # findAndModify, histograms, read tops, write up to 2 tops
    bound = 3 + 3 * per_board  # plus the solves log insert, its "applied" mark, the live counter
    assert small["solve (3 boards)"] <= bound and large["solve (3 boards)"] <= bound
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
    assert len(rows) == 10  # five operations at two sizes
    assert "Same number of commands at every size: rank lookup, board page 1" in lines[-1]

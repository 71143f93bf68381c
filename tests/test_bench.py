"""`manage.py bench`: the MongoDB commands of every board read and of a solve do not grow with
the board, in process and through HTTP as users call it (counted with pymongo's command
monitoring, with the bytes each way; not timed); a new day's first page costs what any page
does, and its day change moves the programmers the day brings; the server's CPU and the
bench's own are columns (figures, never asserted as times)."""

from __future__ import annotations

import datetime as dt
import random
import re
from io import StringIO
from unittest import mock
from zoneinfo import ZoneInfo

import pytest
import redis
import time_machine
from django.conf import settings
from django.core.management import call_command
from pymongo import MongoClient

from bench.counting import HTTP_CACHED, HTTP_UNCACHED, IN_PROCESS, CommandCounter
from bench.in_process import ANOTHER_EACH_TIME, SCORE_REPORTED
from bench.new_day import (
    LAST_HOUR_BEGIN,
    LAST_HOUR_FINISH,
    LAST_HOUR_PASS,
    NEW_DAY_PAGE,
    NEW_DAY_SOLVE,
    days_changed,
    programmers_moved,
    solve_days_read,
)
from bench.report import DJANGO_CPU, SERVER_CPU, bytes_flat
from bench.run import bench_run
from bench.seed import SCORE_PROBLEMS, bench_seed, best_board, scratch_database
from bench.web import SCORE_RANGE
from solutions import mongo, solvers
from solutions.leaderboard import encoding, journals, sets
from solutions.models import Board
from tests.services_available import REDIS_URL, require_redis

# Ordered with the database tests (pytest-django runs tests with no database mark last, after
# the transactional ones have flushed the boards the migrations made).
pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture(scope="module", autouse=True)
def noon():
    """The bench at noon of today, its clock ticking: in the last hour of a day tomorrow is being
    made, and every solve also records for it whom it moved (it costs more then, as it should),
    so figures taken in that hour differ from the rest of the day's."""
    today = dt.datetime.now(ZoneInfo(settings.LEADERBOARD_TIME_ZONE))
    with time_machine.travel(today.replace(hour=12, minute=0, second=0, microsecond=0), tick=True):
        yield


@pytest.fixture(scope="module")
def measured(django_db_setup, django_db_blocker, embedded_server):
    """One run at 200 and 2,000 programmers, shared by the tests that read its figures (a
    run costs some 20 s on this machine)."""
    real_name, settings.MONGODB_DB = settings.MONGODB_DB, "leaderboard_test"
    try:
        # Journals of 64 places: the row of solves with their folds needs a few dozen solves.
        with django_db_blocker.unblock(), mock.patch.object(journals, "JOURNAL_MAX", 64):
            results = bench_run(
                uri=embedded_server.uri,
                sizes=[200, 2000],
                repeat=1,
                report=lambda _: None,
                server_pid=embedded_server.process.pid,
            )
    finally:
        settings.MONGODB_DB = real_name
    return results


def counts(results, size: int) -> dict[str, int]:
    return {result.operation: result.commands for result in results if result.programmers == size}


def by_size(results, size: int, how: tuple[str, ...]) -> dict:
    return {r.operation: r for r in results if r.programmers == size and r.how in how}


def test_reads_and_solves_cost_the_same_commands_at_200_and_2000_programmers(
    measured, embedded_server
):
    small, large = counts(measured, 200), counts(measured, 2000)
    # Every read is the board's journal (the part of that day), the day's root, its node, plus
    # one read of sets by `_id`, at any offset (a group of at most 128 keeps its members inside
    # its root: two reads).
    for page in ("page 1", "middle page", "last page"):
        assert small[page] == large[page] == 4, page
    # A score range: the histogram in the root says where its programmers start, then a page.
    assert small["score range (2 to 4)"] == large["score range (2 to 4)"] == 4
    assert small["group page"] == 2 and large["group page"] == 4
    assert small["rank"] == large["rank"] == 3  # the entry, the journal and the histogram
    assert small["around me (4)"] == large["around me (4)"] <= 7
    assert small["profile"] == large["profile"]
    # A solve (the bench's programmer solving again), 8 commands whatever the boards but for
    # their entry reads: one command of writes to several collections with the solve's log,
    # each board's entry (one pipeline update each) and the problem's solver count, the index
    # of the solve's day, the chunk of its minute and the solve marked counted; the lease, listing
    # them as pending; the journals' versions; each board's entry read; the journals of every
    # board at once with the histograms of the groups' orders it moves (no manifest and no set);
    # then one command of writes: the journals, each board's record of what the orders hold, the
    # "applied" mark, the live counters and the lease back.
    boards = 3
    assert small["solve (3 boards)"] == large["solve (3 boards)"] == 1 + 1 + 1 + boards + 1 + 1
    # Another programmer each time costs the same, until a journal is full and folded; with
    # the folds (the busiest journal folded three times: 64 places here, a fold a dozen
    # solves), at most 15 commands a solve on average, and well under 200 KB each way: under
    # 64 KB sent and 32 KB received, as a batch reads and writes only the pairs it moves
    # (`journals`; a solve sends ~36 KB, most of it the entries' pipelines, whatever the journal).
    assert small["solve, another each time"] == large["solve, another each time"] == 8
    for size in (200, 2000):
        folded = by_size(measured, size, (IN_PROCESS,))[ANOTHER_EACH_TIME]
        solves, most = re.match(r"(\d+) solves, \d+ to (\d+) folds", folded.note).groups()
        assert int(most) >= 3 and int(solves) > 3 * 8
        assert 8 < folded.commands <= 15
        assert folded.sent < 64 * 1024 and folded.received < 32 * 1024
    # The year on a profile reads the programmer's own solves; the problems' solver counts and
    # a problem's solvers are one read of their `problem_stats` documents: at any size.
    for operation in ("year and streaks", "problems with solver counts", "a problem's solvers"):
        assert small[operation] == large[operation] <= 1, operation
    # A middle page of everybody who solved a problem (200 or 2,000 of them): the problem's day
    # counts, the indexes of the page's days, then the page's minute chunks (one read, or two
    # when the page starts inside a minute).
    middle = "a problem's solvers, middle page"
    assert 3 <= small[middle] <= 4 and 3 <= large[middle] <= 4
    # Groups ranked against each other: the ranklist's journal part, manifest and at most one
    # read of sets, then the groups' names.
    assert small["countries ranked"] <= 4 and large["countries ranked"] <= 4
    # The server's own account (explain) of the documents the reads examined: no read scans,
    # each find examines the one document it returns (the journal always exists: it keeps the
    # board's frontier). A country of 33 fits inside its root: one document, not three.
    examined = {r.operation: r.examined for r in by_size(measured, 200, (IN_PROCESS,)).values()}
    examined_large = {
        r.operation: r.examined for r in by_size(measured, 2000, (IN_PROCESS,)).values()
    }
    # A new day's change reads the programmers it moves, and its beginning in the last hour
    # folds what the journal holds (the tests after this one); a programmer's own solves are
    # read by a scan of the log on the embedded server (the xfail below).
    last_hour = (LAST_HOUR_BEGIN, LAST_HOUR_PASS, LAST_HOUR_FINISH)
    for each in (examined, examined_large):
        for operation in (NEW_DAY_SOLVE, *last_hour, "profile", "year and streaks"):
            each.pop(operation)
    assert examined.pop("group page") == 2 and examined_large.pop("group page") <= 4
    # The page's days and minutes: a day holds 20 or 200 of the solvers, so a page spans more
    # days at 200; each solver has a minute of their own, so 50 chunks at most either way.
    page = solvers.SOLVERS_PAGE
    assert examined.pop(middle) <= 1 + 4 + page and examined_large.pop(middle) <= 1 + 2 + page
    # The ranklists: at most the journal, the manifest and a set twice, and the page's names.
    for each in (examined, examined_large):
        assert each.pop("countries ranked") <= 2 + 6  # six countries at most, named
    assert examined == examined_large
    assert all(
        examined[page] <= 4
        for page in ("page 1", "middle page", "last page", "score range (2 to 4)")
    )
    assert examined["rank"] <= 3
    # The scratch database is gone afterwards.
    with MongoClient(embedded_server.uri) as client:
        assert "leaderboard_test_bench" not in client.list_database_names()


def test_a_new_days_first_page_costs_what_any_page_does_and_its_change_is_the_days_moves(
    measured,
):
    for size in (200, 2000):
        rows = by_size(measured, size, (IN_PROCESS,))
        page, solve = rows[NEW_DAY_PAGE], rows[NEW_DAY_SOLVE]
        # The page read after the day's first solve: the journal's part of the new day, its
        # root, node and a set, like any day's.
        assert page.commands == rows["page 1"].commands == 4, size
        # The first solve after midnight is a solve plus the day change of every board: the
        # fold of its journal, the roots copied from the day before (everybody's and each
        # group's, in bulk), and the programmers moved in one pass an order.
        assert solve.commands > rows["solve (3 boards)"].commands
        moved = int(re.search(r"moving ([\d,]+)", solve.note).group(1).replace(",", ""))
        assert moved > 0
    small = by_size(measured, 200, (IN_PROCESS,))[NEW_DAY_SOLVE]
    large = by_size(measured, 2000, (IN_PROCESS,))[NEW_DAY_SOLVE]
    # Ten times the programmers, ten times the moves: the work follows them, and the commands
    # grow far less (each order's sets read and written once, in `$in` reads and bulks).
    assert large.commands < 3 * small.commands


def test_tomorrows_lease_held_parts_do_not_grow_with_the_programmers_the_day_moves(measured):
    """A day made in the last hour of the day before: its pass moves the programmers the day
    brings, ten times as many at 2,000, off the lease. What holds the lease (its beginning: the
    journal's fold; its finish: the twenty who solved meanwhile) takes about
    the same commands at both sizes: its bytes follow the sizes of a journal, a root and a set,
    which stop growing at a bound (README, "The largest document of each collection"), not
    the moves."""
    small, large = (by_size(measured, size, (IN_PROCESS,)) for size in (200, 2000))

    def moved(row):
        return int(re.search(r"moving ([\d,]+)", row.note).group(1).replace(",", ""))

    assert moved(large[LAST_HOUR_PASS]) > 5 * moved(small[LAST_HOUR_PASS]) > 0
    assert large[LAST_HOUR_PASS].commands > 1.5 * small[LAST_HOUR_PASS].commands
    for held in (LAST_HOUR_BEGIN, LAST_HOUR_FINISH):
        assert large[held].commands <= 1.3 * small[held].commands, held
    assert large[LAST_HOUR_FINISH].received < large[LAST_HOUR_PASS].received / 2


@pytest.mark.xfail(
    strict=True,
    reason="SecantusDB 0.7 plans {programmer_id, held_until: {$exists: false}} as a collection "
    "scan: a programmer's own solves (profile, year) read the whole log",
)
def test_a_programmers_own_solves_are_read_by_index_whatever_the_log(measured):
    small = by_size(measured, 200, (IN_PROCESS,))
    large = by_size(measured, 2000, (IN_PROCESS,))
    for operation in ("profile", "year and streaks"):
        assert small[operation].examined == large[operation].examined, operation


def test_the_server_cpu_and_the_bench_cpu_are_figures_of_every_row(measured):
    # The server's process is known (the embedded one): its CPU is a figure in every row, and
    # the rows together made it work. No time is asserted.
    assert all(r.server_cpu is not None and r.server_cpu >= 0 for r in measured)
    assert all(r.django_cpu is not None and r.django_cpu >= 0 for r in measured)
    assert sum(r.server_cpu for r in measured) > 0


def test_a_best_score_board_is_measured_beside_the_sites_boards(measured):
    for size in (200, 2000):
        rows = {r.operation: r for r in measured if r.programmers == size}
        # A report: the log, the best-score board's entry, then its orders (no other board).
        assert rows[SCORE_REPORTED].how == IN_PROCESS
        assert rows[SCORE_RANGE].how == HTTP_UNCACHED
    small, large = counts(measured, 200), counts(measured, 2000)
    assert small[SCORE_REPORTED] == large[SCORE_REPORTED]
    assert small[SCORE_RANGE] == large[SCORE_RANGE] <= 4  # journal, root, node, a set


HTTP_ROWS = {
    "board page 1 (API)",
    "board page 1 (page)",
    "board page 1 (page, cached)",
    "middle page (API)",
    "last page (API)",
    "a country's page 1 (API)",
    "around me (4) with forecast (API)",
    "profile (page)",
    "countries ranked (page)",
    "countries ranked (API)",
    "organizations, middle page (API)",
    "prefix search (API)",
    "solve (API)",
    SCORE_RANGE,
}


def test_each_request_through_http_costs_the_same_commands_at_200_and_2000_programmers(measured):
    small = by_size(measured, 200, (HTTP_UNCACHED, HTTP_CACHED))
    large = by_size(measured, 2000, (HTTP_UNCACHED, HTTP_CACHED))
    assert small.keys() == large.keys() == HTTP_ROWS
    # A country's page reads fewer documents on a small board, by design: a group of at most 128
    # programmers keeps its members inside its root (a country has some 33 at 200, 333 at
    # 2,000), and so does the ranklist of the 10 organizations of 200 programmers (100 at 2,000:
    # the journal part, the root and the names, the start of a tie found in the same records).
    assert small.pop("a country's page 1 (API)").commands == 2
    assert large.pop("a country's page 1 (API)").commands == 4
    assert small["organizations, middle page (API)"].commands == 3
    for name in small:
        assert small[name].commands == large[name].commands, name
    # A page through the API: journal, root, node, set. The page adds the board's version (the
    # cache cleared) and yesterday's ranks of its rows for the arrows (journal, histogram, the
    # rows' entries by `$in`); from the cache, nothing.
    assert large["board page 1 (API)"].commands == large["last page (API)"].commands == 4
    assert large["board page 1 (page)"].commands <= 8
    assert large["board page 1 (page, cached)"].commands == 0
    # A judge's solve through the API: the solve of the engine plus the idempotency key's
    # claim and answer.
    assert large["solve (API)"].commands == counts(measured, 2000)["solve (3 boards)"] + 2

    # A solve's bytes are mostly its boards' journals, read whole and their parts written
    # whole: they hold the pairs of every programmer moved since the last fold (at most
    # JOURNAL_MAX), so they follow how full the journals are, not the board's size. Here the
    # same number of programmers moved before it at both sizes, but each with their own days:
    # 80.8 / 88.2 KB sent and 72.3 / 79.5 received, at the edge of ±10%. Held to ±25%.
    solve_small, solve_large = small.pop("solve (API)"), large.pop("solve (API)")
    for what in ("sent", "received"):
        figures = [getattr(solve_small, what), getattr(solve_large, what)]
        assert bytes_flat(figures, tolerance=0.25), what
    # The organizations' middle page names fewer at 200 (the 10 organizations make one page).
    small.pop("organizations, middle page (API)"), large.pop("organizations, middle page (API)")
    # What each other request sends is the same at both sizes (±10%).
    for name in small:
        assert bytes_flat([small[name].sent, large[name].sent]), name
    # What comes back is too for these:
    for name in ("board page 1 (page, cached)", "prefix search (API)"):
        assert bytes_flat([small[name].received, large[name].received]), name
    # The profile also shows the rank on the bench's best-score board, which reads the root's
    # histogram: one record a distinct total (issue 35: bounded by the scores, not by a size),
    # and the seed's totals are 0 to 1,000 a problem. At 2,000 the page receives some 9 KB more.
    best_totals = SCORE_PROBLEMS * 1000 + 1
    profile = [small["profile (page)"].received, large["profile (page)"].received]
    assert profile[1] <= 1.1 * profile[0] + encoding.HISTOGRAM.size * best_totals
    # The countries' ranklist gets the same six countries at both sizes, and the journal part
    # of their order: a pair of records (some 100 bytes) for each move of a country by the
    # solves measured before, as many as those solves happened to make at each size (1.49 KB
    # against 1.26 through the page). Held to ±25%.
    for name in ("countries ranked (page)", "countries ranked (API)"):
        figures = [small[name].received, large[name].received]
        assert bytes_flat(figures, tolerance=0.25), name
    # Not for the rows that read a set of members (pages, around me): a read gets a whole set to
    # show 25 rows, and a board of 200 has one set of 200 members (10 KB) where a larger board's
    # sets hold about SET_FILL, 512 (26 KB), so at 2,000 a page receives 2.4 times the bytes it
    # does at 200 (27.0 KB against 11.1; around me 27.4 against 11.5). That stops at a set's
    # size (SET_MAX members) instead of growing with the board, but it is not ±10% here.
    # Issue 22: the manifest tree (`leaderboard/tree.py`) bounds the manifest's part of these
    # bytes at large sizes; this part needs a read that fetches only the page's members of a
    # set. Until then these rows are held to a bound that does not depend on the board's size:
    # one full set a page, two for around me (its neighbours may straddle two sets), plus 8 KB
    # (the journal part, the manifest, and for the page its rows' entries).
    full_set = sets.SET_MAX * encoding.RECORD_BYTES
    for name in ("board page 1 (API)", "board page 1 (page)", "middle page (API)"):
        assert small[name].received < large[name].received <= full_set + 8 * 1024, name
    assert large["last page (API)"].received <= full_set + 8 * 1024
    assert large["around me (4) with forecast (API)"].received <= 2 * full_set + 8 * 1024


def test_the_seed_logs_what_the_new_day_rows_and_the_profile_read_and_no_more(
    embedded_server, db, settings
):
    # The seed logs only the solve days the day changes of the new-day and last-hour rows read,
    # and every solve of the programmer measured: those rows move whom a whole log would have
    # them move, and the profile lists the same solves, from a log a fraction of the size.
    def seeded(name: str, log_days: set[int] | None) -> dict:
        settings.MONGODB_DB = name
        with best_board(list(Board.objects.all())) as boards:
            with scratch_database(embedded_server.uri, CommandCounter()):
                mongo.ensure_indexes([board.slug for board in boards])
                board = next(board for board in boards if board.slug == "last-7-days")
                seed = bench_seed(
                    boards=boards, measured=board, size=300, rng=random.Random(3), log_days=log_days
                )
                return {
                    "moved": [programmers_moved(boards, day) for day in days_changed(repeat=2)],
                    "own": mongo.solves().count_documents({"programmer_id": seed.middle.pk}),
                    "middle": seed.middle.pk,
                    "logged": mongo.solves().count_documents({}),
                }

    with best_board(list(Board.objects.all())) as boards:
        days = solve_days_read(boards, repeat=2)
    whole = seeded("leaderboard_test_whole", None)
    part = seeded("leaderboard_test_part", days)
    for figure in ("moved", "own", "middle"):
        assert part[figure] == whole[figure], figure
    assert all(each > 0 for each in part["moved"]) and part["own"] >= 1
    assert part["logged"] < whole["logged"] / 2  # a few days of ten, and the one programmer's


def test_the_command_prints_one_markdown_table_with_the_sizes_side_by_side(
    embedded_server, db, settings, monkeypatch
):
    settings.MONGODB_DB = "leaderboard_test"
    monkeypatch.setattr(journals, "JOURNAL_MAX", 16)  # a fold every few solves
    out = StringIO()
    sizes = ("--programmers", "30,60", "--repeat", "1", "--folds", "1")
    call_command("bench", *sizes, "--uri", embedded_server.uri, stdout=out)
    lines = out.getvalue().splitlines()
    heading = next(line for line in lines if line.startswith("| operation |"))
    columns = ("commands", "sent KB", "received KB", "median ms at 30", "p95 ms at 60", "×")
    for column in (*columns, SERVER_CPU, DJANGO_CPU):
        assert f"| {column} |" in heading, column
    rows = [line for line in lines if line.startswith("| ") and line != heading]
    # One row per operation, the sizes side by side: 16 in process, a score reported, tomorrow's
    # three parts in the last hour, the new day's first solve and page, and the requests through
    # HTTP.
    assert len(rows) == 16 + 1 + 3 + 2 + len(HTTP_ROWS)
    for name in (SCORE_REPORTED, LAST_HOUR_PASS, NEW_DAY_SOLVE, NEW_DAY_PAGE, SCORE_RANGE):
        assert any(row.startswith(f"| {name} |") for row in rows), name
    # Through --uri the server's process is not known: "—" in its column, a figure in Django's.
    cells = [row.split(" | ") for row in rows]
    server, django = heading.split(" | ").index(SERVER_CPU), heading.split(" | ").index(DJANGO_CPU)
    assert all(cell[server] == "—" for cell in cells)
    assert all(float(part) >= 0 for cell in cells for part in cell[django].split(" / "))
    assert any("| HTTP, cache cleared |" in row for row in rows)
    assert any(
        row.startswith("| board page 1 (page, cached) | HTTP, page cached | 0 |") for row in rows
    )
    same = next(line for line in lines if line.startswith("The same commands and bytes (±10%)"))
    assert "board page 1 (page, cached)" in same


def test_the_same_reads_and_solve_are_measured_on_redis_sorted_sets(embedded_server, db, settings):
    require_redis()
    settings.MONGODB_DB = "leaderboard_test"
    url = REDIS_URL.rsplit("/", 1)[0] + "/13"
    results = bench_run(
        uri=embedded_server.uri,
        sizes=[50],
        repeat=1,
        report=lambda _: None,
        redis_url=url,
        folds=0,
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

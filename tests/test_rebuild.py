"""`manage.py rebuild_boards`: after a random stream of solves (late ones, repeats, over several
days), wiping or corrupting the derived data and rebuilding gives back every board page and
every rank of every day; `--dry-run` writes nothing; `--board` touches one board only."""

from __future__ import annotations

import datetime as dt
import random
from io import StringIO

import pytest
import time_machine
from django.core.management import CommandError, call_command
from pymongo import MongoClient

from solutions import leaderboard, mongo, selectors, services
from solutions.leaderboard import entries, journals, orders, rebuild, sets, tree
from solutions.models import Board, Problem, Programmer
from tests.conftest import NOW
from tests.support.commands import CommandLog

TODAY = leaderboard.epoch_day(NOW, "UTC")
FIRST_DAY = TODAY - 6  # the stream runs from here to today
DAYS = range(FIRST_DAY - 9, TODAY + 1)  # late solves reach 9 days back


@pytest.fixture(params=["sets of 1024", "sets of 3", "sets of 3 in nodes of 3"])
def streamed(request, mongodb, boards_of_every_kind, monkeypatch):
    """A week of judging, day by day with the clock pinned: on-time solves, late ones, repeats
    (with sets of 3, orders of many sets that split and empty; in nodes of 3, orders of several
    levels whose nodes are cut and emptied, see `tree`)."""
    if request.param != "sets of 1024":
        monkeypatch.setattr(sets, "SET_MAX", 3)
        monkeypatch.setattr(sets, "SET_FILL", 2)
        monkeypatch.setattr(orders, "INLINE_MAX", 1)
        monkeypatch.setattr(sets, "ARRIVALS_MAX", 2)
    if request.param == "sets of 3 in nodes of 3":
        monkeypatch.setattr(tree, "NODE_MAX", 3)
        monkeypatch.setattr(tree, "NODE_FILL", 2)
        monkeypatch.setattr(journals, "JOURNAL_MAX", 40)  # folds often: moves through the levels
    rng = random.Random(1234)
    boards = boards_of_every_kind
    programmers = [
        services.programmer_create(
            user=None, handle=f"judge{n:02d}", country=rng.choice(["BD", "IN", ""])
        )
        for n in rng.sample(range(100), 30)
    ]
    services.programmer_create(user=None, handle="idle")  # solves nothing
    problems = Problem.objects.bulk_create(
        Problem(slug=f"s{i}", title=f"S{i}", points=rng.choice([10, 30, 100])) for i in range(12)
    )
    counted = repeats = 0
    for day in range(FIRST_DAY, TODAY + 1):
        moment = NOW if day == TODAY else NOW - dt.timedelta(days=TODAY - day, hours=-8)
        with time_machine.travel(moment, tick=False):
            for _ in range(8):
                late = rng.choice([0, 0, 0, 0, 1, 2, 5, 9])
                solved_at = moment - dt.timedelta(days=late, minutes=rng.randrange(600))
                recorded = services.solve_record(
                    programmer=rng.choice(programmers),
                    problem=rng.choice(problems),
                    solved_at=solved_at,
                )
                counted, repeats = counted + recorded, repeats + (not recorded)
    assert counted > 30 and repeats > 0
    return boards


def snapshot(boards: dict[str, Board]) -> dict:
    """Every page (as rank, handle, score rows) and every programmer's standing, every day."""
    programmers = list(Programmer.objects.all())
    seen = {}
    for slug, board in boards.items():
        days = [TODAY] if board.spec.is_all_time else DAYS
        for day in days:
            for scope in ["", "country:BD"]:
                pages, number = [], 1
                while True:
                    page = selectors.board_page(
                        board=board, day=day, page=number, page_size=7, scope=scope
                    )
                    if not page.rows:
                        break
                    pages.append([(row.rank, row.handle, row.score) for row in page.rows])
                    number += 1
                seen[(slug, day, scope, "pages")] = (page.total, pages)
            seen[(slug, day, "standings")] = [
                (s.rank, s.score, s.total)
                for s in (
                    selectors.programmer_standing(board=board, programmer=p, day=day)
                    for p in programmers
                )
            ]
    return seen


def stored() -> dict[str, list[dict]]:
    """The raw derived data, to prove a dry run changes none of it."""
    database = mongo.get_db()
    return {
        name: sorted(database[name].find(), key=lambda doc: str(doc["_id"]))
        for name in database.list_collection_names()
        if name.startswith("entries.") or name in {"orders", "order_sets"}
    }


def corrupt(boards: dict[str, Board]) -> None:
    """What a bad deploy or a partial restore might leave: a lost order, an emptied set of
    another, wrong entries, a missing entry, and an entry for somebody who solved nothing."""
    key = str(TODAY)
    orders.orders().delete_one({"_id": orders.order_id("last-7-days", key)})
    # A small order keeps its members inside its manifest: lose them.
    orders.orders().update_one(
        {"_id": orders.order_id("last-30-days", key)}, {"$set": {"inline": b""}}
    )
    victim, lost = entries.entries("last-7-days").find().sort("_id", 1).limit(2)
    entries.entries("last-7-days").update_one(
        {"_id": victim["_id"]},
        {"$set": {f"sums.{key}": 99, f"keys.{key}": leaderboard.sort_key(99, NOW)}},
    )
    entries.entries("last-7-days").delete_one({"_id": lost["_id"]})
    entries.entries("all-time").insert_one(
        {"_id": idle().pk, "handle": "idle", "groups": [], "sums": {"all": 7}, "keys": {"all": 1}}
    )


def idle() -> Programmer:
    return Programmer.objects.get(handle="idle")


def test_a_rebuild_after_corruption_gives_back_every_page_and_rank(streamed, now):
    before = snapshot(streamed)
    corrupt(streamed)
    assert snapshot(streamed) != before  # the damage shows
    out = StringIO()
    call_command("rebuild_boards", stdout=out)
    assert "Rebuilt 4 board(s)." in out.getvalue()
    assert snapshot(streamed) == before


def test_a_rebuild_of_healthy_boards_changes_nothing(streamed, now):
    out = StringIO()
    call_command("rebuild_boards", "--dry-run", stdout=out)
    for slug in streamed:
        assert f"{slug}: " in out.getvalue()
        assert "0 to rewrite, 0 to remove" in out.getvalue().split(f"{slug}: ")[1].splitlines()[0]


def test_a_dry_run_reports_the_damage_and_writes_nothing(streamed, now):
    corrupt(streamed)
    damaged = stored()
    out = StringIO()
    call_command("rebuild_boards", "--dry-run", stdout=out)
    assert stored() == damaged
    report = out.getvalue()
    assert "last-7-days: " in report and "2 to rewrite" in report
    assert "1 to remove" in report.split("all-time: ")[1]
    assert "Dry run: nothing was written." in report


def test_one_board_can_be_rebuilt_alone(streamed, now):
    before = snapshot(streamed)
    corrupt(streamed)
    call_command("rebuild_boards", "--board", "last-7-days", stdout=StringIO())
    after = snapshot(streamed)
    for key, value in before.items():
        if key[0] == "last-7-days":
            assert after[key] == value, key
    assert entries.entries("all-time").find_one({"_id": idle().pk}) is not None  # left alone


def test_an_unknown_board_is_an_error(db):
    with pytest.raises(CommandError, match="no board 'nope'"):
        call_command("rebuild_boards", "--board", "nope")


def test_a_rebuild_finds_the_entries_of_programmers_off_the_board_by_their_ids(
    mongodb, embedded_server
):
    """A rebuild removes the entries the log no longer puts on the board, found by reading the
    ids of the programmers it walks, never by scanning the board: the embedded server holds a
    whole collection decoded to scan it (a million entries: some 18 GB, and the kernel stopped
    it)."""
    log = CommandLog()
    client = MongoClient(embedded_server.uri, tz_aware=True, event_listeners=[log])
    mongo.set_client(client)
    collection = entries.entries("all-time")
    collection.insert_many([{"_id": pid, "handle": f"c{pid}"} for pid in range(2_500)])
    build = rebuild.BoardBuild(
        "all-time", leaderboard.Window(leaderboard.ALL_TIME), TODAY, dry_run=True
    )
    for pid in range(3_000):  # 500 more programmers who were never on the board
        if pid % 25 and pid < 2_500:
            build.add({"_id": pid, "handle": f"c{pid}"}, solve_ids=[])
        else:
            build.absent(pid)
    report = build.finish()
    client.close()
    assert report.removed == 100  # 0, 25, ... 2475
    assert report.entries == 2_400
    reads = [find.document["filter"] for find in log.named("find")]
    assert reads, "the stored entries were read"
    for read in reads:
        assert list(read) == ["_id"] and len(read["_id"]["$in"]) <= mongo.ids_per_read()


def test_a_bulk_command_waits_for_the_server_however_long_a_read_takes(settings):
    """`rebuild_boards` and `import_solves` make the client patient: the embedded server reads
    the whole of a read before answering anything, heartbeats included (a board's million ids:
    67 s), so neither the read's socket nor the heartbeat may time out; a heartbeat that did
    made the driver cancel the read after 18 s. Back to the site's client, patience ends."""
    mongo.set_client(None)
    mongo.patient_commands()
    patient = mongo.get_client()
    mongo.set_client(None)
    impatient = mongo.get_client()
    try:
        assert patient.options.pool_options.socket_timeout is None
        assert patient.options.pool_options.connect_timeout is None
        assert impatient.options.pool_options.connect_timeout == (
            settings.MONGODB_SERVER_TIMEOUT_MS / 1000
        )
    finally:
        mongo.set_client(None)
        patient.close()
        impatient.close()

"""`manage.py import_solves PATH`: a community's history in JSON Lines. Bad lines are reported by
number and skipped, unknown handles and problems are registered, old solves count (history is old
by nature), a second run changes nothing, and the boards show exactly what the log says. On a
terminal each step shows a progress bar; `-v 2` lists how long each step took."""

from __future__ import annotations

import datetime as dt
import json
import threading
from io import StringIO

import pytest
from django.core.management import call_command

from solutions import mongo, selectors
from solutions.leaderboard import entries
from solutions.management.commands import import_solves
from solutions.models import Board, Problem, Programmer
from solutions.services import bulk
from tests.conftest import NOW


def line(**fields) -> str:
    return json.dumps(fields)


def moment(days_ago: float) -> str:
    return (NOW - dt.timedelta(days=days_ago)).isoformat()


@pytest.fixture
def history(tmp_path):
    path = tmp_path / "history.jsonl"
    lines = [
        line(id="h1", programmer="Ada", problem="two-sum", solved_at=moment(1)),
        line(id="h2", programmer="ada", problem="Three-Sum", solved_at=moment(2), points=300),
        line(id="h3", programmer="grace", problem="two-sum", solved_at=moment(3)),
        line(id="h4", programmer="grace", problem="old-one", solved_at=moment(400)),
        line(id="h5", programmer="ada", problem="two-sum", solved_at=moment(0.5)),  # a repeat
        line(id="bad1", programmer="no spaces", problem="x", solved_at=moment(1)),
        "{not json",
        line(id="bad2", programmer="ada", problem="x", solved_at=moment(-1)),  # the future
        line(id="bad3", programmer="ada", problem="x", solved_at=moment(1), extra=1),
        "",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def run(path) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import_solves", str(path), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_an_import_logs_the_good_lines_and_reports_the_bad_ones(mongodb, now, history):
    out, err = run(history)
    assert "imported 4, already present 1, rejected 4" in out
    assert "line 6: programmer" in err
    assert "line 7: not valid JSON" in err
    assert "line 8: solved_at" in err
    assert "line 9: extra" in err
    # Unknown handles and problems were registered, the first spelling kept.
    assert Programmer.objects.filter(handle__in=["Ada", "grace"]).count() == 2
    assert Problem.objects.filter(slug__in=["two-sum", "Three-Sum", "old-one"]).count() == 3


def test_the_boards_show_what_the_imported_history_says(mongodb, now, history):
    run(history)
    ada, grace = (Programmer.objects.get(handle__iexact=h) for h in ("ada", "grace"))
    week = Board.objects.get(slug="last-7-days")
    all_time = Board.objects.get(slug="all-time")
    assert [(r.handle, r.score) for r in selectors.board_page(board=week).rows] == [
        ("Ada", 2),
        ("grace", 1),
    ]
    # The 400-day-old solve counts all-time, though the API would refuse it as too late.
    standing = selectors.programmer_standing(board=all_time, programmer=grace)
    assert standing.score == 2
    assert selectors.programmer_standing(board=week, programmer=ada).rank == 1


def test_a_second_run_changes_nothing(mongodb, now, history):
    run(history)
    week = Board.objects.get(slug="last-7-days")
    before = selectors.board_page(board=week).rows
    out, _err = run(history)
    assert "imported 0, already present 5, rejected 4" in out
    assert selectors.board_page(board=week).rows == before


def test_an_id_sent_again_with_another_body_is_refused(mongodb, now, history, tmp_path):
    run(history)
    changed = tmp_path / "changed.jsonl"
    changed.write_text(line(id="h1", programmer="Ada", problem="other", solved_at=moment(1)))
    out, err = run(changed)
    assert "imported 0, already present 0, rejected 1" in out
    assert "id h1: used before with another body" in err
    assert not Problem.objects.filter(slug="other").exists()


def test_an_id_repeated_while_its_first_batch_is_being_stored_is_refused(
    mongodb, now, tmp_path, monkeypatch
):
    """A batch is stored while the next one is checked: the next one's check must know the ids
    of the batch still being stored, though their records are not written yet."""
    path = tmp_path / "repeated.jsonl"
    first = line(id="r1", programmer="Ada", problem="two-sum", solved_at=moment(1))
    again = line(id="r1", programmer="Grace", problem="three-sum", solved_at=moment(1))
    path.write_text(f"{first}\n{again}\n")
    monkeypatch.setattr(import_solves, "BATCH", 1)
    checked, stored = threading.Event(), []
    check, store = bulk._import_unclaimed, bulk._import_store

    def check_then_tell(solves, *args):
        found = check(solves, *args)
        if any(solve.handle == "Grace" for solve in solves):
            checked.set()
        return found

    def store_once_the_next_is_checked(*args):
        assert checked.wait(timeout=30)
        stored.append(args)
        return store(*args)

    monkeypatch.setattr(bulk, "_import_unclaimed", check_then_tell)
    monkeypatch.setattr(bulk, "_import_store", store_once_the_next_is_checked)
    out, err = run(path)
    assert stored and checked.is_set()  # both replaced steps ran: the batches overlapped
    assert "imported 1, already present 0, rejected 1" in out
    assert "id r1: used before with another body" in err
    assert not Programmer.objects.filter(handle="Grace").exists()


def test_a_run_stopped_before_its_ids_were_claimed_counts_nothing_twice(mongodb, now, history):
    run(history)
    week = Board.objects.get(slug="last-7-days")
    before = selectors.board_page(board=week).rows
    mongodb["import_ids"].delete_many({})  # as if it stopped between the solves and their ids
    out, _err = run(history)
    assert "imported 0, already present 5, rejected 4" in out
    assert selectors.board_page(board=week).rows == before


def test_an_import_into_a_new_site_leaves_every_index_in_place(mongodb, now, history, monkeypatch):
    """The log's secondary indexes and the boards' wildcard ones (made by an operator, on a
    server that reads them) are set aside during the bulk load and made again after it."""
    monkeypatch.setattr(mongo, "server_uses_wildcard_indexes", lambda: True)
    mongo.indexes_ensure()
    for name, models in entries.seed_query_indexes(["last-7-days", "all-time"]).items():
        mongodb[name].create_indexes(models)
    collections = ("solves", "entries.last-7-days", "entries.all-time")

    def indexes() -> dict[str, list[str]]:
        return {name: sorted(mongodb[name].index_information()) for name in collections}

    before = indexes()
    assert "applied_1" in before["solves"] and "keys_wildcard" in before["entries.all-time"]
    run(history)
    assert indexes() == before


class Terminal(StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_shows_each_step_with_a_progress_bar(mongodb, now, history, capsys):
    out, err = Terminal(), StringIO()
    call_command("import_solves", str(history), stdout=out, stderr=err)
    bars = capsys.readouterr().out
    for step in ("lines", "9 lines", "entries", "orders of last-7-days", "solver counts"):
        assert step in bars
    assert "100%" in bars
    assert "line 7: not valid JSON" in err.getvalue()
    assert "imported 4, already present 1, rejected 4" in out.getvalue()


def test_a_file_gets_no_bar_and_verbosity_2_lists_how_long_each_step_took(
    mongodb, now, history, capsys
):
    out = StringIO()
    call_command("import_solves", str(history), stdout=out, stderr=StringIO(), verbosity=2)
    assert capsys.readouterr().out == ""
    listed = out.getvalue()
    assert "imported 4, already present 1, rejected 4" in listed
    for step in ("lines: ", "(9 lines, ", "entries: ", "orders of all-time: ", "solver counts: "):
        assert step in listed


def test_documents_read_by_their_ids_are_those_that_exist(mongodb):
    values = [-5, 0, 1, 2, 499, 500, 501, 777, 1_000, 1_001, 2_500, 10**12]
    mongodb["things"].insert_many([{"_id": n} for n in values])
    assert [doc["_id"] for doc in mongo.find_by_ids(mongodb["things"], [2, 3, 777])] == [2, 777]

"""`manage.py import_solves PATH`: a community's history in JSON Lines. Bad lines are reported by
number and skipped, unknown handles and problems are registered, old solves count (history is old
by nature), a second run changes nothing, and the boards show exactly what the log says."""

from __future__ import annotations

import datetime as dt
import json
from io import StringIO

import pytest
from django.core.management import call_command

from solutions import selectors
from solutions.models import Board, Problem, Programmer
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

"""`seed_demo` gives a newcomer a living site: problems, programmers on every board, a month of
solves with the rank history it would have left, a running competition, and a `demo` staff user
who can log in to the site and the admin. `make reset` starts it over."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from activity import selectors as activity_selectors
from solutions import clock, mongo, selectors, services
from solutions.models import Board, Problem, Programmer


def seed(*args: str) -> str:
    out = StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


def printed_password(output: str) -> str:
    found = re.search(r"Demo staff login: demo / (\S+) ", output)
    assert found, output
    return found.group(1)


def test_seed_demo_fills_every_board_with_solves_from_the_last_weeks(mongodb, now, boards):
    output = seed("--programmers", "40")
    assert Problem.objects.filter(published=True).count() == 12
    assert Programmer.objects.count() == 41  # and the demo user's own handle
    assert "40 programmers" in output

    pages = {slug: selectors.board_page(board=board) for slug, board in boards.items()}
    assert 0 < pages["last-7-days"].total <= pages["last-30-days"].total
    assert pages["last-30-days"].total == pages["all-time"].total == 40
    scores = [row.score for row in pages["all-time"].rows]
    assert scores == sorted(scores, reverse=True) and scores[0] > 1
    oldest = mongo.solves().find_one(sort=[("solved_at", 1)])["solved_at"]
    assert clock.today() - services.solve_day(oldest) <= 29
    assert mongo.solves().count_documents({}) > 40


def test_seed_demo_boards_match_a_rebuild_from_the_solves_log(mongodb, now, boards):
    seed("--programmers", "15")
    board = Board.objects.get(slug="last-7-days")
    before = selectors.board_page(board=board)
    assert services.board_rebuild(board=board, dry_run=True).changed == 0
    assert selectors.board_page(board=board).rows == before.rows


def test_the_demo_user_logs_in_to_the_site_and_the_admin_with_the_printed_password(
    mongodb, now, boards
):
    output = seed("--programmers", "5")
    assert "/admin/" in output
    user = authenticate(username="demo", password=printed_password(output))
    assert user is not None and user.is_staff
    assert user.programmer.handle == "demo"
    client = Client()
    client.force_login(user)
    assert client.get("/admin/").status_code == 200


def test_seed_demo_if_empty_leaves_a_site_with_problems_alone_and_says_how_to_reset(
    mongodb, now, boards, problems
):
    output = seed("--if-empty", "--programmers", "5")
    assert "no demo data added" in output
    assert "make reset" in output
    assert not Programmer.objects.exists()
    assert mongo.solves().count_documents({}) == 0


def test_seed_demo_twice_adds_new_programmers_without_clashing(mongodb, now, boards):
    seed("--programmers", "5")
    output = seed("--programmers", "5")
    assert Programmer.objects.count() == 11
    assert Problem.objects.count() == 12
    handles = list(Programmer.objects.values_list("handle", flat=True))
    assert len({handle.lower() for handle in handles}) == len(handles)
    assert "make reset" in output  # the first password is not known any more


def test_reset_starts_the_demo_over_with_a_new_password(mongodb, now, boards, settings):
    settings.DEBUG = True
    first = printed_password(seed("--programmers", "10"))
    Programmer.objects.create(handle="someone_else")
    output = seed("--reset", "--no-input", "--programmers", "6")
    second = printed_password(output)
    assert authenticate(username="demo", password=first) is None
    assert authenticate(username="demo", password=second) is not None
    assert Programmer.objects.count() == 7
    assert not Programmer.objects.filter(handle="someone_else").exists()
    assert selectors.board_page(board=boards["all-time"]).total == 6
    assert sorted(mongo.solves().distinct("programmer_id")) == sorted(
        Programmer.objects.exclude(handle="demo").values_list("pk", flat=True)
    )


def test_reset_refuses_without_debug(mongodb, now, boards):
    seed("--programmers", "3")
    with pytest.raises(CommandError, match="DEBUG"):
        seed("--reset", "--no-input")
    assert Programmer.objects.count() == 4


def test_demo_profiles_chart_a_month_of_past_ranks_on_every_board(mongodb, now, boards):
    seed("--programmers", "20")
    for board in boards.values():
        leader = Programmer.objects.get(handle=selectors.board_page(board=board).rows[0].handle)
        history = activity_selectors.rank_history(board=board, programmer=leader)
        recorded_past_days = [rank for _, rank in history[:-1] if rank is not None]
        assert len(recorded_past_days) >= 5, board.slug
        if not board.spec.is_all_time:
            expected = selectors.programmer_standing(
                board=board, programmer=leader, day=clock.today() - 1
            )
            assert history[-2][1] == expected.rank


def test_the_all_time_board_of_the_demo_shows_new_only_for_newcomers(mongodb, now, boards):
    seed("--programmers", "60")
    text = Client().get("/leaderboard/all-time/").text
    arrows = re.findall(r'class="move (new|up|down|same)"', text)
    assert arrows and arrows.count("new") < len(arrows) / 2
    assert "up" in arrows or "same" in arrows
    # "new" marks exactly the programmers whose first solve is today.
    first_day: dict[int, int] = {}
    for solve in mongo.solves().find({}, {"programmer_id": 1, "solved_at": 1}):
        day = services.solve_day(solve["solved_at"])
        first_day[solve["programmer_id"]] = min(day, first_day.get(solve["programmer_id"], day))
    shown = selectors.board_page(board=boards["all-time"]).rows
    newcomers = [row for row in shown if first_day[row.programmer_id] == clock.today()]
    assert arrows.count("new") == len(newcomers)


def test_the_demo_has_a_running_competition_with_standings(mongodb, now, boards):
    output = seed("--programmers", "10")
    assert "Competition running: /competitions/demo-cup/" in output
    judged = mongo.submissions().distinct("handle", {"competitions": "demo-cup"})
    assert judged
    page = Client().get("/competitions/demo-cup/standings/")
    assert page.status_code == 200
    assert all(handle in page.text for handle in judged)

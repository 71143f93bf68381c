"""`seed_demo` gives a newcomer a living site: problems, programmers on every board, solves
spread over the last weeks, and a `demo` user who can log in."""

from __future__ import annotations

from io import StringIO

from django.contrib.auth import authenticate
from django.core.management import call_command
from django.test import Client

from solutions import mongo, selectors, services
from solutions.models import Board, Problem, Programmer


def seed(*args: str) -> str:
    out = StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


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
    assert services.today() - services.solve_day(oldest) <= 29
    assert mongo.solves().count_documents({}) > 40


def test_seed_demo_boards_match_a_rebuild_from_the_solves_log(mongodb, now, boards):
    seed("--programmers", "15")
    board = Board.objects.get(slug="last-7-days")
    before = selectors.board_page(board=board)
    assert services.board_rebuild(board=board, dry_run=True).changed == 0
    assert selectors.board_page(board=board).rows == before.rows


def test_the_demo_user_can_log_in_with_the_printed_password(mongodb, now, boards):
    output = seed("--programmers", "5")
    password = output.strip().splitlines()[-1].rsplit(": ", 1)[1]
    user = authenticate(username="demo", password=password)
    assert user is not None
    assert user.programmer.handle == "demo"


def test_seed_demo_if_empty_leaves_a_site_with_problems_alone(mongodb, now, boards, problems):
    output = seed("--if-empty", "--programmers", "5")
    assert "no demo data added" in output
    assert not Programmer.objects.exists()
    assert mongo.solves().count_documents({}) == 0


def test_seed_demo_twice_adds_new_programmers_without_clashing(mongodb, now, boards):
    seed("--programmers", "5")
    seed("--programmers", "5")
    assert Programmer.objects.count() == 11
    assert Problem.objects.count() == 12
    handles = list(Programmer.objects.values_list("handle", flat=True))
    assert len({handle.lower() for handle in handles}) == len(handles)


def test_demo_profiles_chart_past_ranks_from_the_start(mongodb, now, boards):
    from activity import selectors as activity_selectors

    seed("--programmers", "20")
    board = boards["last-30-days"]
    leader = Programmer.objects.get(handle=selectors.board_page(board=board).rows[0].handle)
    history = activity_selectors.rank_history(board=board, programmer=leader)
    recorded_past_days = [rank for _, rank in history[:-1] if rank is not None]
    assert len(recorded_past_days) >= 5
    expected = selectors.programmer_standing(
        board=board, programmer=leader, day=services.today() - 1
    )
    assert history[-2][1] == expected.rank


def test_the_demo_has_a_running_competition_with_standings(mongodb, now, boards):
    output = seed("--programmers", "10")
    assert "Competition running: /competitions/demo-cup/" in output
    judged = mongo.submissions().distinct("handle", {"competitions": "demo-cup"})
    assert judged
    page = Client().get("/competitions/demo-cup/standings/")
    assert page.status_code == 200
    assert all(handle in page.text for handle in judged)

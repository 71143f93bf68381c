"""Countries and organizations ranked against each other on every board (issue 23, part 4).

A group's score on a board day is Σ s_i · (1/5) · (4/5)^i over its members' scores sorted from the
best. Every ranklist is checked against a brute-force computation over the `solves` log with exact
fractions, on random histories (late solves, gaps, hides, bans, a change of organization, several
days and time zones, forward-dated days that come round with no solve), through the API page by
page; a rebuild from the log gives the same ranklists; the board page shows them; and what a page,
the API and a solve cost does not grow with the number of programmers.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import re
from collections import defaultdict
from unittest import mock

import pytest
import time_machine
from django.core.cache import cache
from django.test import Client
from pymongo import MongoClient
from pymongo.errors import AutoReconnect

from accounts import services as account_services
from solutions import leaderboard, mongo, recent, services
from solutions.leaderboard import encoding, groups, journals, order_writes, orders, sets
from solutions.models import Board, Problem, Programmer
from tests.conftest import NOW, make_programmer, random_solves
from tests.support.commands import CommandLog
from tests.support.pages import ranks
from tests.support.ranklists import brute_ranklist, listed, weighted

TODAY = leaderboard.epoch_day(NOW, "UTC")  # 18280, 2020-01-19
COUNTRIES = ["BD", "IN", "NP", ""]
ORGS = ["BUET", "DU", "IIT Delhi", "Kathmandu University", "NSU", "SUST", "TU", ""]


# --- brute force -----------------------------------------------------------------------------


# --- the maths (pure) ------------------------------------------------------------------------


def test_the_score_key_is_the_exact_score_to_2_to_the_minus_64_for_any_group():
    rng = random.Random(4)
    for _ in range(600):
        size = rng.choice([1, 2, 3, 7, 30, 400, 1500])
        scores = [rng.choice([1, 1, 2, 3, 5, 40, 1000]) for _ in range(size)]
        histogram: dict[int, int] = defaultdict(int)
        for score in scores:
            histogram[score] += 1
        exact = weighted(scores)
        assert groups.score_key(histogram) == math.floor(exact * 2**64)
        assert groups.score_tenths(groups.score_key(histogram)) == math.floor(exact * 10 + 0.5)


def test_equal_scores_tie_exactly_and_a_group_is_not_ranked_by_its_size_alone():
    # 5 and 5 weigh 5/5 + 5·4/25 = 1.8, exactly as one 9 does.
    assert groups.score_key({5: 2}) == groups.score_key({9: 1})
    assert groups.score_shown(groups.score_key({9: 1})) == 1.8
    # A thousand programmers who solved one problem each do not beat one who solved five.
    assert groups.score_key({1: 1000}) < groups.score_key({5: 1})
    assert groups.record("org:Nobody", {}) is None


def test_a_groups_record_sorts_by_score_then_id_and_carries_its_members():
    better = groups.record("country:BD", {9: 1, 1: 3})
    worse = groups.record("country:IN", {9: 1})
    assert better is not None and worse is not None and better < worse
    # 9/5 + 4/25 + 16/125 + 64/625 = 2.19: the manifest counts it by its whole part.
    assert len(better) == encoding.RECORD_BYTES and encoding.record_score(better) == 2
    ranked = groups.Ranked.of(better)
    assert ranked.members == 4 and ranked.group_id == groups.group_id("country:BD")
    assert groups.probe(ranked.key) < better < groups.probe(ranked.key - 1)


# --- random histories ------------------------------------------------------------------------


def _random_history(rng: random.Random, start: dt.datetime) -> dt.datetime:
    """Twelve programmers in random countries and organizations solving over 9 days, a third of the
    solves reported late (up to 3 days), with gaps, hides, bans, returns and a change of
    organization in between. Returns the moment of the last event."""
    programmers = [
        make_programmer(f"coder{i}", country=rng.choice(COUNTRIES), organization=rng.choice(ORGS))
        for i in range(12)
    ]
    problems = [
        Problem.objects.create(slug=f"g{i}", title=f"G{i}", points=10 * i + 10) for i in range(6)
    ]
    events = []
    for programmer in programmers:
        events += random_solves(rng, programmer, problems, start=start, days=9, late_hours=72)
        for _ in range(rng.randrange(3)):
            moment = start + dt.timedelta(seconds=rng.randrange(10 * 86400))
            events.append((moment, rng.choice(["hidden", "banned", "org"]), programmer, None, None))
    events.sort(key=lambda e: (e[0], e[1], e[2].pk))
    for moment, what, programmer, problem, solved_at in events:
        with time_machine.travel(moment, tick=False):
            programmer.refresh_from_db()
            if what == "solve":
                services.solve_record(programmer=programmer, problem=problem, solved_at=solved_at)
            elif what == "org":
                account_services.programmer_groups_change(
                    programmer=programmer,
                    country=str(programmer.country),
                    organization=rng.choice(ORGS),
                )
            else:
                services.programmer_set_visibility(
                    programmer=programmer, **{what: not getattr(programmer, what)}
                )
    return events[-1][0]


def _check_every_day(client: Client, boards: dict[str, Board], time_zone: str, today: int) -> int:
    """Every board day of the last 12 up to today, both kinds: the API's pages agree with
    the brute force. Returns how many groups were ranked in all."""
    ranked = 0
    for board in boards.values():
        days = [today] if board.spec.is_all_time else range(today - 12, today + 1)
        for day in days:
            for kind in groups.KINDS:
                expected = brute_ranklist(board, day, kind, time_zone)
                # One organization a page (every tie runs across pages), three countries.
                shown = listed(client, board, day, kind, page_size=1 if kind == "org" else 3)
                assert shown == expected, (board.slug, day, kind)
                ranked += len(expected)
    return ranked


LAYOUTS = {
    # Sets of 3 and journals folded every few programmers: ranklists of many sets that split,
    # and pages that read them while parts of the journal still lie over them.
    "small sets, folding often": {"SET_MAX": 3, "SET_FILL": 2, "INLINE_MAX": 1, "JOURNAL_MAX": 40},
    "folded every batch": {"JOURNAL_MAX": 0},
    "as deployed": {},
}


def _layout(monkeypatch, layout: str) -> None:
    for name, value in LAYOUTS[layout].items():
        owner = {"INLINE_MAX": orders, "JOURNAL_MAX": journals}.get(name, sets)
        monkeypatch.setattr(owner, name, value)
    if "SET_MAX" in LAYOUTS[layout]:
        monkeypatch.setattr(sets, "ARRIVALS_MAX", 2)


@pytest.mark.parametrize(
    "time_zone, layout",
    [
        ("UTC", "as deployed"),
        ("Asia/Dhaka", "small sets, folding often"),
        ("America/Los_Angeles", "folded every batch"),
    ],
)
def test_group_ranklists_equal_a_brute_force_over_the_log_on_random_histories(
    mongodb, boards_of_every_kind, settings, monkeypatch, client, time_zone, layout
):
    settings.LEADERBOARD_TIME_ZONE = time_zone
    _layout(monkeypatch, layout)
    rng = random.Random(f"{time_zone}{layout}")
    start = dt.datetime(2020, 3, 1, 5, 30, tzinfo=dt.UTC)
    last = _random_history(rng, start)
    # At the end of the history, then as days come round with no solve at all (the scores of
    # forward-dated days, kept by the solves that made them).
    for after in (0, 2, 8):
        moment = last + dt.timedelta(days=after)
        with time_machine.travel(moment, tick=False):
            today = leaderboard.epoch_day(moment, time_zone)
            ranked = _check_every_day(client, boards_of_every_kind, time_zone, today)
            assert ranked > 100


def test_a_rebuild_from_the_log_gives_the_same_ranklists(mongodb, boards_of_every_kind, client):
    rng = random.Random(99)
    last = _random_history(rng, dt.datetime(2020, 3, 1, 5, 30, tzinfo=dt.UTC))
    with time_machine.travel(last, tick=False):
        today = leaderboard.epoch_day(last, "UTC")
        before = {
            (slug, day, kind): listed(client, board, day, kind, page_size=100)
            for slug, board in boards_of_every_kind.items()
            for day in ([today] if board.spec.is_all_time else range(today - 10, today + 1))
            for kind in groups.KINDS
        }
        assert any(before.values())
        orders.orders().delete_many({"_id": {"$regex": r"\|groups:"}})  # ranklists lost
        mongo.get_db()["group_names"].delete_many({})
        services.boards_rebuild_all()
        after = {key: listed(client, boards_of_every_kind[key[0]], *key[1:], 100) for key in before}
        assert after == before


@pytest.mark.parametrize(
    "module, cut",
    [(journals, "journals_swap"), (order_writes, "manifests_move")],
    ids=["journals_swap", "manifests_move"],
)
def test_a_batch_or_a_fold_cut_short_leaves_every_ranklist_right_once_finished(
    mongodb, now, boards, client, monkeypatch, module, cut
):
    """The storage goes away as a batch writes the journals, or as it folds them into the
    manifests: once the next batch and the repair task have run, every ranklist is what the
    log says, with nobody counted twice."""
    rng = random.Random(cut)
    people = [
        make_programmer(f"t{i}", country=COUNTRIES[i % 3], organization=ORGS[i % 4])
        for i in range(8)
    ]
    problems = [Problem.objects.create(slug=f"c{i}", title=f"C{i}") for i in range(5)]
    for programmer in people:
        for problem in rng.sample(problems[:4], rng.randrange(1, 4)):
            moment = NOW - dt.timedelta(hours=rng.randrange(1, 100))
            services.solve_record(programmer=programmer, problem=problem, solved_at=moment)
    monkeypatch.setattr(journals, "JOURNAL_MAX", 0)  # the next batch folds
    real, calls = getattr(module, cut), []

    def lost_once(*args):
        calls.append(args)
        if len(calls) == 1:
            raise AutoReconnect("connection to the server was lost")
        return real(*args)

    with mock.patch.object(module, cut, side_effect=lost_once), pytest.raises(AutoReconnect):
        services.solve_record(programmer=people[0], problem=problems[4], solved_at=NOW)
    services.solve_record(programmer=people[1], problem=problems[4], solved_at=NOW)
    now.shift(dt.timedelta(minutes=5))
    services.solves_repair()
    for board in boards.values():
        days = [TODAY] if board.spec.is_all_time else range(TODAY - 5, TODAY + 1)
        for day in days:
            for kind in groups.KINDS:
                expected = brute_ranklist(board, day, kind, "UTC")
                assert listed(client, board, day, kind) == expected, (board.slug, day, kind)


# --- the page --------------------------------------------------------------------------------


@pytest.fixture
def teams(mongodb, now, boards, problems, alice, bob, charlie):
    """Today Alice (BD, BUET) solved 3 problems, Bob (IN) 2, Dora (BD, DU) 1 and Charlie (no
    group) 1; Eve (IN, DU) solved 2 yesterday."""
    dora = make_programmer("Dora", country="BD", organization="DU")
    eve = make_programmer("Eve", country="IN", organization="DU")
    for programmer, count, hours_ago in [
        (alice, 3, 1),
        (bob, 2, 2),
        (dora, 1, 3),
        (eve, 2, 26),
        (charlie, 1, 4),
    ]:
        for problem in problems[:count]:
            services.solve_record(
                programmer=programmer,
                problem=problem,
                solved_at=NOW - dt.timedelta(hours=hours_ago),
            )
    return {"dora": dora, "eve": eve}


def group_rows(response) -> list[tuple[str, str, str, str]]:
    """(rank, name, score, programmers) of each row of the groups table."""
    assert response.status_code == 200, response.content[:300]
    table = response.text.split('<table class="board groups">')[1].split("</table>")[0]
    found = re.findall(
        r'<td class="rank">(\d+)</td>\s*<td class="group">.*?<a [^>]*>([^<]+)</a>.*?</td>\s*'
        r'<td class="score">([\d.]+)</td>\s*<td class="score">(\d+)</td>',
        table,
        re.S,
    )
    return found


def test_the_countries_view_ranks_the_countries_with_their_scores_and_members(client, teams):
    page = client.get("/leaderboard/last-7-days/?view=countries")
    # Bangladesh: 3 and 1 → 3/5 + 4/25 = 0.76; India: 2 and 2 → 2/5 + 8/25 = 0.72.
    assert group_rows(page) == [("1", "Bangladesh", "0.8", "2"), ("2", "India", "0.7", "2")]
    assert 'href="?country=BD"' in page.text and 'href="?country=IN"' in page.text
    assert "flags/bd.gif" in page.text
    assert "Σ sᵢ × ⅕ × (⅘)ⁱ" in page.text and "share a rank" in page.text
    assert '<span class="current" aria-current="true">Countries</span>' in page.text
    assert "view=organizations" in page.text  # the other view is a link
    # Each row's link ranks the group's programmers on the same board.
    assert ranks(client.get("/leaderboard/last-7-days/?country=BD")) == [
        (1, "Alice", 3),
        (2, "Dora", 1),
    ]


def test_the_organizations_view_ties_share_a_rank_and_yesterday_has_its_own_list(
    client, teams, now
):
    # BUET: Alice's 3 → 0.6; DU: Eve's 2 and Dora's 1 → 2/5 + 4/25 = 0.56: two decimals, so
    # that the second rank does not show the first one's score.
    today = group_rows(client.get("/leaderboard/last-7-days/?view=organizations"))
    assert today == [("1", "BUET", "0.60", "1"), ("2", "DU", "0.56", "2")]
    yesterday = client.get("/leaderboard/last-7-days/?view=organizations&date=2020-01-18")
    assert group_rows(yesterday) == [("1", "DU", "0.4", "1")]  # only Eve had solved
    assert 'href="?date=2020-01-18&amp;org=DU"' in yesterday.text
    # Hidden, Dora leaves DU's score (now Eve's 2 alone) and its members.
    services.programmer_set_visibility(programmer=teams["dora"], hidden=True)
    now.shift(dt.timedelta(seconds=2))  # a visitor's page follows the board within a second
    assert group_rows(client.get("/leaderboard/last-7-days/?view=organizations")) == [
        ("1", "BUET", "0.6", "1"),
        ("2", "DU", "0.4", "1"),
    ]
    # Eve's third solve: DU's 3/5 equals BUET's, and they share the first rank.
    services.solve_record(
        programmer=teams["eve"], problem=Problem.objects.get(slug="p9"), solved_at=NOW
    )
    now.shift(dt.timedelta(seconds=2))
    assert sorted(group_rows(client.get("/leaderboard/last-7-days/?view=organizations"))) == [
        ("1", "BUET", "0.6", "1"),
        ("1", "DU", "0.6", "1"),
    ]


def test_a_signed_in_programmer_sees_where_their_own_group_stands(teams, alice):
    client = Client()
    client.force_login(alice.user)
    page = client.get("/leaderboard/last-7-days/?view=organizations")
    assert "Your organization, BUET, is ranked <strong>1</strong> of 2" in page.text
    assert 'class="me" id="me"' in page.text and "(yours)" in page.text
    countries = client.get("/leaderboard/last-7-days/?view=countries").text
    assert "Your country, Bangladesh, is ranked <strong>1</strong> of 2" in countries


def test_group_views_page_and_say_when_nobody_or_no_such_page(mongodb, now, boards, client):
    crowd = Programmer.objects.bulk_create(
        Programmer(handle=f"c{i:02}", organization=f"Org {i:02}") for i in range(30)
    )
    problems = [Problem.objects.create(slug=f"x{i}", title=f"X{i}") for i in range(3)]
    services.solves_import(
        solves=[
            (programmer, problem, NOW - dt.timedelta(hours=1 + i))
            for i, programmer in enumerate(crowd)
            for problem in problems[: 1 + i % 3]
        ]
    )
    first = group_rows(client.get("/leaderboard/last-7-days/?view=organizations"))
    second = group_rows(client.get("/leaderboard/last-7-days/?view=organizations&page=2"))
    assert len(first) == 25 and len(second) == 5
    # Ten organizations score 0.6 (3 solved), ten 0.4, ten 0.2: ties share a rank across pages.
    assert [row[0] for row in first][:11] == ["1"] * 10 + ["11"]
    assert [row[0] for row in second] == ["21"] * 5
    missing = client.get("/leaderboard/last-7-days/?view=organizations&page=3")
    assert missing.status_code == 404 and "There is no page 3" in missing.text
    assert "No country has anybody" in client.get("/leaderboard/last-7-days/?view=countries").text


def test_the_live_fragment_of_a_group_view_is_the_ranklist(client, teams):
    fragment = client.get("/leaderboard/last-7-days/live/?view=countries")
    assert fragment.status_code == 200
    assert '<table class="board groups">' in fragment.text and "<html" not in fragment.text
    assert 'data-key="country:BD"' in fragment.text


# --- the API ---------------------------------------------------------------------------------


def test_the_api_ranks_the_groups_with_the_documented_shape(client, teams):
    answer = client.get("/api/v1/boards/last-7-days/groups?kind=country")
    assert answer.status_code == 200
    assert answer.json() == {
        "board": "last-7-days",
        "date": "2020-01-19",
        "kind": "country",
        "total": 2,
        "page": 1,
        "page_size": 25,
        "pages": 1,
        "entries": [
            {"rank": 1, "group": "BD", "name": "Bangladesh", "score": 0.8, "members": 2},
            {"rank": 2, "group": "IN", "name": "India", "score": 0.7, "members": 2},
        ],
    }
    orgs = client.get("/api/v1/boards/last-7-days/groups?kind=org&date=2020-01-18").json()
    assert orgs["entries"] == [{"rank": 1, "group": "DU", "name": "DU", "score": 0.4, "members": 1}]
    assert client.get("/api/v1/boards/all-time/groups?kind=org&page=9").json()["entries"] == []


@pytest.mark.parametrize(
    "query, status, code",
    [
        ("", 400, "invalid_parameter"),
        ("kind=city", 400, "invalid_parameter"),
        ("kind=country&date=2020-13-01", 400, "bad_date"),
        ("kind=country&date=2019-01-01", 400, "bad_date"),
        ("kind=org&page=0", 400, "invalid_parameter"),
        ("kind=org&page_size=101", 400, "invalid_parameter"),
    ],
)
def test_the_api_refuses_a_bad_kind_date_or_page_in_the_error_shape(
    client, teams, query, status, code
):
    answer = client.get(f"/api/v1/boards/last-7-days/groups?{query}")
    assert answer.status_code == status
    assert answer.json()["error"]["code"] == code and answer.json()["error"]["message"]


def test_the_api_says_which_boards_it_does_not_know(client, teams):
    answer = client.get("/api/v1/boards/nope/groups?kind=country")
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "unknown_board"
    past = client.get("/api/v1/boards/all-time/groups?kind=country&date=2020-01-18")
    assert past.status_code == 400 and past.json()["error"]["code"] == "bad_date"


def test_the_api_document_defines_the_score(client, db):
    document = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/boards/{board}/groups" in document["paths"]
    described = " ".join(document["components"]["schemas"]["GroupRanklist"]["description"].split())
    assert "sum of s_i * (1/5) * (4/5)^i" in described and "hidden and banned" in described


# --- cost ------------------------------------------------------------------------------------


def sizes(log: CommandLog) -> list[tuple[str, int]]:
    """(name, bytes sent and received) of every command in the log."""
    return [(command.name, command.sent + (command.received or 0)) for command in log.commands]


def _crowd(size: int) -> None:
    """`size` programmers in 10 countries and 40 organizations, each with 2 solves over the last
    days: every group of a kind scores the same, so each page after the first finds its tie
    running on from the page before (the dearer read)."""
    rng = random.Random(size)
    codes = ["BD", "IN", "NP", "PK", "LK", "US", "CN", "RU", "BR", "JP"]
    crowd = Programmer.objects.bulk_create(
        Programmer(handle=f"crowd{i:04}", country=codes[i % 10], organization=f"Org {i % 40}")
        for i in range(size)
    )
    problems = [Problem.objects.create(slug=f"k{i}", title=f"K{i}") for i in range(2)]
    services.solves_import(
        solves=[
            (programmer, problem, NOW - dt.timedelta(seconds=rng.randrange(6 * 86400)))
            for programmer in crowd
            for problem in problems
        ]
    )


READS = [
    "/api/v1/boards/last-7-days/groups?kind=country",
    "/api/v1/boards/last-7-days/groups?kind=org&page=2&page_size=10",
    "/api/v1/boards/last-30-days/groups?kind=org&page=3&page_size=10",
    "/leaderboard/last-7-days/?view=organizations&page=2",
]


def _costs(size: int, embedded_server) -> dict[str, list[tuple[str, int]]]:
    """{what: [(MongoDB command, bytes sent and received)]} of each ranklist read and of a solve
    by a programmer in a country and an organization, with `size` programmers on the boards."""
    for name in mongo.get_db().list_collection_names():
        mongo.get_db()[name].delete_many({})
    Programmer.objects.all().delete()
    Problem.objects.all().delete()
    _crowd(size)
    log = CommandLog(on=False)
    previous = mongo.get_client()
    client = MongoClient(embedded_server.uri, tz_aware=True, event_listeners=[log])
    mongo.set_client(client)
    costs = {}
    try:
        web = Client()
        for path in READS:
            web.get(path)  # warm up
            cache.clear()  # read afresh, as the first request after a solve does
            recent.clear()
            log.clear()
            with log.recording():
                assert web.get(path).status_code == 200
            costs[path] = sizes(log)
        solver = Programmer.objects.get(handle="crowd0001")
        problem = Problem.objects.create(slug="fresh", title="Fresh")
        log.clear()
        with log.recording():
            services.solve_record(programmer=solver, problem=problem, solved_at=NOW)
        costs["solve"] = sizes(log)
    finally:
        mongo.set_client(previous)
        client.close()
    return costs


def test_what_a_ranklist_and_a_solve_cost_does_not_grow_with_the_programmers(
    mongodb, embedded_server, now, boards, monkeypatch
):
    # Sets of 8: every order holds many sets, as at a million with sets of 1024. The groups are
    # the same at both sizes, ten times as big at the second: what grows with the number of
    # groups is the ranklist's manifest, a few bytes a set, like a board's with its programmers.
    monkeypatch.setattr(sets, "SET_MAX", 8)
    monkeypatch.setattr(sets, "SET_FILL", 4)
    monkeypatch.setattr(orders, "INLINE_MAX", 1)
    small, large = _costs(80, embedded_server), _costs(800, embedded_server)
    for what in small:
        assert [name for name, _ in small[what]] == [name for name, _ in large[what]], what
        small_bytes = sum(size for _, size in small[what])
        large_bytes = sum(size for _, size in large[what])
        assert large_bytes <= small_bytes + 2048, (what, small_bytes, large_bytes)
    # Page 1: the ranklist's journal part, root, node and sets, then the groups' names. A page
    # whose first group ties with the one before reads, from the same documents, where the tie
    # starts: the sets holding that start too, when the page's own do not.
    assert len(small["/api/v1/boards/last-7-days/groups?kind=country"]) == 5
    assert len(small["/api/v1/boards/last-7-days/groups?kind=org&page=2&page_size=10"]) in (5, 6)


def test_scores_get_the_decimals_that_tell_different_ones_apart():
    three_six = groups.score_key({18: 1})  # 18 / 5 = 3.6
    three_five_six = groups.score_key({17: 1, 1: 1})  # 17 / 5 + 4 / 25 = 3.56
    keys = [three_six, three_five_six, three_five_six]
    decimals = groups.decimals_telling_apart(keys)
    assert decimals == 2
    assert [groups.score_text(key, decimals) for key in keys] == ["3.60", "3.56", "3.56"]
    assert groups.decimals_telling_apart([three_six, three_six]) == 1  # a tie stays a tie
    assert groups.score_text(groups.score_key({3: 1}), 1) == "0.6"
    # Scores apart by less than any decimal a page shows still read apart.
    close = [1 << 64, (1 << 64) - 1]
    texts = [groups.score_text(key, groups.decimals_telling_apart(close)) for key in close]
    assert texts[0] != texts[1]

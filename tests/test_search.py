"""Finding people by the start of their handle: `?q=` on every board page and the suggestions
API (`GET /api/v1/programmers?prefix=&board=`). Any case; one match goes straight to that
programmer with their neighbours, several are listed with each one's rank and score (from the
same selector as every other rank), none say so. The cost does not grow with the number of
programmers: a range of the handle index in SQL (on SQLite and PostgreSQL), and a fixed number
of MongoDB reads for the ranks."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from html.parser import HTMLParser

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from solutions import recent, selectors
from solutions.models import Board, Programmer
from tests.conftest import NOW
from tests.services_available import POSTGRES_URL, require_postgres
from tests.support.browser import browser, live_server_http, new_tab, site  # noqa: F401  (fixtures)
from tests.support.commands import CommandLog
from tests.support.pages import crowd, ranks, solve
from tests.support.production import PRODUCTION, manage

API = "/api/v1/programmers"


class MatchRows(HTMLParser):
    """The rows of the matches table as a reader sees them: rank (None for "—"), handle, score
    (None for "—")."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[int | None, str, int | None]] = []
        self._in_table = False
        self._cells: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table" and "matches" in (dict(attrs).get("class") or ""):
            self._in_table = True
        elif self._in_table and tag == "tr":
            self._cells = []
        elif self._cells is not None and tag == "td":
            self._cells.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_table = False
        elif tag == "tr" and self._cells:
            rank, handle, score = (self._cells[i].split()[0] for i in (0, 1, 2))
            number = lambda text: None if text == "—" else int(text)  # noqa: E731
            self.rows.append((number(rank), handle, number(score)))
            self._cells = None

    def handle_data(self, data: str) -> None:
        if self._cells:
            self._cells[-1] += data


def matches(response) -> list[tuple[int | None, str, int | None]]:
    assert response.status_code == 200, response.content[:500]
    parser = MatchRows()
    parser.feed(response.content.decode())
    return parser.rows


def standing_of(handle: str, board_slug: str = "last-7-days") -> tuple[int | None, str, int | None]:
    """The programmer's rank and score as the profile and the board say it (the one selector)."""
    programmer = Programmer.objects.get(handle=handle)
    board = Board.objects.get(slug=board_slug)
    standing = selectors.programmer_standing(board=board, programmer=programmer)
    if standing.rank is None:
        return (None, handle, None)
    return (standing.rank, handle, standing.score)


@pytest.fixture
def bolds(mongodb, now, boards, problems):
    """Bold (3 solves), Bolt (1), bolero (2), and Bob-Marley (1): all start with "bo"; "bol" only
    the first three. Zed has solved nothing."""
    people = {
        handle: Programmer.objects.create(handle=handle)
        for handle in ["Bold", "Bolt", "bolero", "Bob-Marley", "Zed"]
    }
    for handle, count in [("Bold", 3), ("Bolt", 1), ("bolero", 2), ("Bob-Marley", 1)]:
        for problem in problems[:count]:
            solve(people[handle], problem, NOW - dt.timedelta(hours=1))
    return people


# --- the board page ------------------------------------------------------------------------------


def test_it_lists_everyone_whose_handle_starts_with_the_letters_in_any_case(bolds):
    page = Client().get("/leaderboard/?q=BOL")
    assert "Handles starting with “BOL”" in page.text
    # In handle order (any case), each with the rank and score the selector gives.
    assert matches(page) == [standing_of("Bold"), standing_of("bolero"), standing_of("Bolt")]
    assert matches(page) == [(1, "Bold", 3), (2, "bolero", 2), (3, "Bolt", 1)]
    assert "3 programmers, in handle order" in page.text


def test_one_match_goes_straight_to_that_programmer_with_four_above_and_four_below(
    mongodb, now, boards
):
    crowd(list(range(12, 0, -1)))
    page = Client().get("/leaderboard/?q=P0")  # p00..p09: several
    assert [handle for _, handle, _ in matches(page)] == [f"p{i:02}" for i in range(10)]
    page = Client().get("/leaderboard/?q=P1")  # p10, p11... and p1 is no handle: several again
    assert len(matches(page)) == 2
    page = Client().get("/leaderboard/?q=p07")  # only one starts with it
    assert "Around p07" in page.text
    assert ranks(page) == [(rank, f"p{rank - 1:02}", 13 - rank) for rank in range(4, 13)]
    assert matches(page) == []  # no list for a single match


def test_a_handle_typed_in_full_shows_that_programmer_and_lists_the_others_starting_with_it(
    mongodb, now, boards, problems, bob
):
    bobby = Programmer.objects.create(handle="Bobby")
    solve(bob, problems[0])
    solve(bobby, problems[0], NOW - dt.timedelta(hours=2))
    solve(bobby, problems[1], NOW - dt.timedelta(hours=2))
    page = Client().get("/leaderboard/?q=BOB")
    assert "Around bob" in page.text
    assert ranks(page) == [(1, "Bobby", 2), (2, "bob", 1)]
    assert matches(page) == [(2, "bob", 1), (1, "Bobby", 2)]


def test_a_search_nobody_matches_says_no_one_starts_with_it(bolds):
    page = Client().get("/leaderboard/?q=bx")
    assert "No one starts with “bx”" in page.text
    assert matches(page) == []


def test_a_match_who_is_not_on_the_board_is_listed_without_a_rank(bolds, charlie):
    Programmer.objects.create(handle="Zeus")
    page = Client().get("/leaderboard/?q=ze")
    assert matches(page) == [(None, "Zed", None), (None, "Zeus", None)]
    assert "not on this board" in page.text
    page = Client().get("/leaderboard/?q=charl")  # the only match: as an exact search did
    assert "charlie</a> is not on this board" in page.text


def test_a_search_a_visitor_saw_before_shows_who_signed_up_since(bolds):
    assert "Zed</a> is not on this board" in Client().get("/leaderboard/?q=ze").text  # the one
    Programmer.objects.create(handle="Zeus")  # signs up: no board changes
    page = Client().get("/leaderboard/?q=ze")
    assert matches(page) == [(None, "Zed", None), (None, "Zeus", None)]


def test_hidden_and_banned_programmers_are_not_found_by_the_public(bolds):
    Programmer.objects.filter(handle="Bolt").update(hidden=True)
    Programmer.objects.filter(handle="bolero").update(banned=True)
    page = Client().get("/leaderboard/?q=bol")
    assert "Around Bold" in page.text  # the one programmer left
    answer = Client().get(API, {"prefix": "bol", "board": "last-7-days"}).json()
    assert [entry["handle"] for entry in answer["entries"]] == ["Bold"]


def test_a_long_list_stops_at_twenty_and_says_how_many_more(mongodb, now, boards):
    crowd([1] * 25, prefix="ada")
    page = Client().get("/leaderboard/?q=ada")
    assert [handle for _, handle, _ in matches(page)] == [f"ada{i:02}" for i in range(20)]
    assert "25 programmers, in handle order" in page.text
    assert "And 5 more — type more letters" in page.text


def test_the_matches_show_the_ranks_of_the_day_and_group_the_page_shows(
    mongodb, now, boards, problems, alice
):
    albert = Programmer.objects.create(handle="albert", country="BD")
    solve(albert, problems[0])
    solve(albert, problems[1])
    solve(alice, problems[0], NOW - dt.timedelta(days=1))
    # Today Alice's solve of yesterday still counts on the 7 days; in Bangladesh both are ranked.
    assert matches(Client().get("/leaderboard/?q=al&country=BD")) == [
        (1, "albert", 2),
        (2, "Alice", 1),
    ]
    # Yesterday Albert had solved nothing yet.
    yesterday = Client().get("/leaderboard/?q=al&date=2020-01-18")
    assert matches(yesterday) == [(None, "albert", None), (1, "Alice", 1)]


def test_a_unique_ranks_board_lists_each_ones_own_rank(mongodb, now, boards_of_every_kind):
    crowd([2, 2, 1], prefix="tie")
    page = Client().get("/leaderboard/last-30-days/?q=tie")
    assert matches(page) == [(1, "tie00", 2), (2, "tie01", 2), (3, "tie02", 1)]
    assert matches(page) == [standing_of(f"tie0{i}", "last-30-days") for i in range(3)]


def test_what_is_no_handle_start_is_a_form_error_not_a_search(mongodb, now, boards):
    page = Client().get("/leaderboard/?q=a b")
    assert page.status_code == 400
    assert "Use 1 to 32 letters" in page.text


def test_the_search_box_suggests_with_the_sites_own_script(mongodb, now, boards):
    page = Client().get("/leaderboard/").text
    assert 'list="handle-suggestions"' in page
    assert f'data-suggest-url="{API}"' in page
    assert '<datalist id="handle-suggestions"></datalist>' in page
    assert '<script src="/static/solutions/search.js" defer></script>' in page


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_typing_the_start_of_a_handle_suggests_the_matches_with_their_ranks_in_a_browser(
    new_tab,  # noqa: F811
    site,  # noqa: F811
):
    tab = new_tab()
    tab.open("/leaderboard/")
    tab.page.fill("#id_q", "COD")
    options = tab.page.locator("#handle-suggestions option")
    options.last.wait_for(state="attached")
    suggested = options.evaluate_all(
        "options => options.map(option => [option.value, option.label])"
    )
    # The crowd of twelve coders, one solve each, all three behind Alice and Bob.
    assert suggested == [[f"coder{i:02}", "rank 3 · score 1"] for i in range(12)]
    tab.page.fill("#id_q", "coder05")
    tab.page.press("#id_q", "Enter")
    tab.page.wait_for_url("**q=coder05*")
    assert "Around coder05" in tab.page.content()
    assert tab.errors == []  # no script error and no CSP violation


# --- the API -------------------------------------------------------------------------------------


def test_the_api_answers_at_most_twenty_in_handle_order_with_ranks_and_how_many_more(
    mongodb, now, boards, problems
):
    crowd([3, 1] + [0] * 21, prefix="Ann")  # Ann00 and Ann01 on the board, 21 more not
    answer = Client().get(API, {"prefix": "aNN", "board": "last-7-days"})
    assert answer.status_code == 200
    body = answer.json()
    assert body["board"] == "last-7-days" and body["date"] == "2020-01-19"
    assert [entry["handle"] for entry in body["entries"]] == [f"Ann{i:02}" for i in range(20)]
    assert body["entries"][:3] == [
        {"handle": "Ann00", "rank": 1, "score": 3},
        {"handle": "Ann01", "rank": 2, "score": 1},
        {"handle": "Ann02", "rank": None, "score": 0},
    ]
    assert (body["more"], body["more_exact"]) == (3, True)
    # The default board when none is named; a past date is that day's board.
    assert Client().get(API, {"prefix": "ann01"}).json()["entries"] == [
        {"handle": "Ann01", "rank": 2, "score": 1}
    ]
    past = Client().get(API, {"prefix": "ann01", "date": "2020-01-18"}).json()
    assert past["entries"] == [{"handle": "Ann01", "rank": None, "score": 0}]


def test_the_count_of_more_matches_stops_at_a_thousand(mongodb, now, boards):
    Programmer.objects.bulk_create(Programmer(handle=f"m{i:04}") for i in range(1005))
    body = Client().get(API, {"prefix": "m", "board": "last-7-days"}).json()
    assert (len(body["entries"]), body["more"], body["more_exact"]) == (20, 980, False)
    page = Client().get("/leaderboard/?q=m").text
    assert "At least 1000 programmers" in page and "And at least 980 more" in page


@pytest.mark.parametrize(
    "query",
    [
        {"prefix": ""},
        {"prefix": "a b"},
        {"prefix": "a%"},
        {"prefix": "é"},
        {"prefix": "x" * 33},
        {},
    ],
    ids=["empty", "space", "percent", "accent", "too long", "missing"],
)
def test_the_api_refuses_what_no_handle_can_start_with(mongodb, now, boards, query):
    answer = Client().get(API, {"board": "last-7-days", **query})
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_parameter"


def test_the_api_says_when_there_is_no_such_board(mongodb, now, boards):
    answer = Client().get(API, {"prefix": "a", "board": "nope"})
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "unknown_board"


# --- cost -------------------------------------------------------------------------------------


def costs(client: Client, url: str, commands: CommandLog) -> tuple[int, int]:
    """(SQL queries, MongoDB commands) of one request, with nothing cached."""
    cache.clear()
    recent.clear()
    commands.clear()
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries), len(commands)


def test_a_search_costs_the_same_queries_and_commands_at_10_and_200_programmers(
    mongodb, now, boards, mongo_commands
):
    # 25 start with "bo" (more than a list holds), 3 with "bx"; the board grows around them.
    crowd([1] * 25, prefix="bo")
    crowd([2] * 3, prefix="bx")
    crowd([3] * 10, prefix="a")
    client = Client()
    searches = [f"{API}?prefix=bo&board=last-7-days", f"{API}?prefix=bx", "/leaderboard/?q=bo"]
    small = [costs(client, url, mongo_commands) for url in searches]
    crowd([3] * 190, prefix="c")
    large = [costs(client, url, mongo_commands) for url in searches]
    assert small == large
    # The API: the boards, a range of the handle index, and (the list full) a capped count;
    # the day's histogram (the journal's part and the manifest) and one `$in` of entries.
    assert small[0] == (3, 3)


def test_the_prefix_is_a_range_of_the_handle_index_on_sqlite(db):
    plan = selectors.programmers_starting_with(prefix="Bo")[:21].explain()
    assert "USING INDEX programmer_handle_ci_unique" in plan, plan
    assert "SCAN solutions_programmer" not in plan and "TEMP B-TREE" not in plan, plan


def test_a_handle_in_any_case_is_one_read_of_the_handle_index_on_sqlite(db):
    Programmer.objects.create(handle="Bolt")
    found = Programmer.objects.handle_is("bOLT")
    assert [p.handle for p in found] == ["Bolt"]
    plan = found.explain()
    assert "USING INDEX programmer_handle_ci_unique" in plan, plan
    assert "SCAN solutions_programmer" not in plan, plan


def test_an_imports_handles_are_lookups_of_the_handle_index_on_sqlite(db):
    Programmer.objects.bulk_create(Programmer(handle=h) for h in ("Bolt", "ada", "Zed"))
    found = Programmer.objects.handles_in(["bOLT", "ZED", "nobody"])
    assert sorted(p.handle for p in found) == ["Bolt", "Zed"]
    plan = found.explain()
    assert "USING INDEX programmer_handle_ci_unique" in plan, plan
    assert "SCAN solutions_programmer" not in plan, plan


# What the PostgreSQL test runs in a migrated database: a board of 20,000 handles and a few
# that differ only where a linguistic collation would be wrong, then the plan of a search.
POSTGRES_SCRIPT = """
import json
from django.db import connection
from django.contrib.auth.models import User
from solutions import selectors
from solutions.forms import users_logging_in_as
from solutions.models import Programmer
handles = [f"h{n:05d}" for n in range(20000)] + ["bo9", "BO99", "bo9a", "bo8", "boa", "b-o9", "bp"]
Programmer.objects.bulk_create(Programmer(handle=handle) for handle in handles)
User.objects.bulk_create(User(username=handle) for handle in handles[:20000])
with connection.cursor() as cursor:
    cursor.execute("ANALYZE solutions_programmer")
    cursor.execute("ANALYZE auth_user")
found = selectors.programmers_starting_with(prefix="Bo9")
plan = found[:21].explain()
exact = Programmer.objects.handle_is("bO99")
print(json.dumps({
    "handles": [p.handle for p in found],
    "plan": plan,
    "exact": [p.handle for p in exact],
    "exact_plan": exact.explain(),
    "several_plan": Programmer.objects.handles_in(["BO99", "h00042", "nobody"]).explain(),
    "login": [u.username for u in users_logging_in_as("H00042")],
    "login_plan": users_logging_in_as("H00042").explain(),
}))
"""


def test_the_prefix_is_a_range_of_the_handle_index_on_postgresql_in_any_collation():
    require_postgres()
    import psycopg

    name = f"leaderboard_search_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as server:
        # A linguistic default collation (ICU's en-US) puts ":" (the end of the "bo9" range in
        # bytes) before the digits: compared that way the range would hold nothing.
        server.execute(
            f'CREATE DATABASE "{name}" TEMPLATE template0 LOCALE_PROVIDER icu '
            "ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
        )
    url = POSTGRES_URL.rsplit("/", 1)[0] + f"/{name}"
    try:
        migrated = manage("migrate", "--no-input", DATABASE_URL=url, **PRODUCTION)
        assert migrated.returncode == 0, migrated.stderr
        ran = manage("shell", "-c", POSTGRES_SCRIPT, DATABASE_URL=url, **PRODUCTION)
        assert ran.returncode == 0, ran.stderr
        answer = json.loads(ran.stdout.strip().splitlines()[-1])
        assert answer["handles"] == ["bo9", "BO99", "bo9a"]
        assert "Index Scan using programmer_handle_ci_unique" in answer["plan"], answer["plan"]
        assert "Seq Scan" not in answer["plan"] and "Sort" not in answer["plan"], answer["plan"]
        # A handle in any case: one read of the same index.
        assert answer["exact"] == ["BO99"]
        assert "Index Scan using programmer_handle_ci_unique" in answer["exact_plan"]
        # An import's handles, 500 at a time: lookups of the same index.
        assert "programmer_handle_ci_unique" in answer["several_plan"], answer["several_plan"]
        assert "Seq Scan" not in answer["several_plan"], answer["several_plan"]
        # Sign-up's check of login names in any case: the index of migration 0009.
        assert answer["login"] == ["h00042"]
        assert "auth_user_username_ci" in answer["login_plan"], answer["login_plan"]
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as server:
            server.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

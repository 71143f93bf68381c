"""The indexes correctness rests on exist before the first write that needs it, whether or not
an operator ran `mongo_indexes`; the command applies every app's declared indexes."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from pymongo import IndexModel, MongoClient
from pymongo.errors import DuplicateKeyError

from solutions import leaderboard, mongo, tokens
from tests.support.commands import CommandLog


def indexed(log: CommandLog) -> list[str]:
    """The collection of each `createIndexes` command in the log."""
    return [command.document["createIndexes"] for command in log.named("createIndexes")]


@pytest.fixture
def mongo_commands() -> CommandLog:
    """The MongoDB commands the clients of a test send."""
    return CommandLog()


@pytest.fixture
def fresh_database(embedded_server, settings, db, mongo_commands):
    """An empty database, as a site deployed without running `mongo_indexes` finds it."""
    settings.MONGODB_DB = "leaderboard_test_fresh"
    client = MongoClient(embedded_server.uri, tz_aware=True, event_listeners=[mongo_commands])
    client.drop_database(settings.MONGODB_DB)
    mongo.set_client(client)
    yield client[settings.MONGODB_DB]
    mongo.set_client(None)
    client.drop_database(settings.MONGODB_DB)
    client.close()


def post_solve(client, token: str, request_id: str, solved_at: str):
    body = {"id": request_id, "programmer": "Alice", "problem": "p1", "solved_at": solved_at}
    return client.post(
        "/api/v1/solves",
        json.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )


def test_a_re_solve_on_another_day_counts_once_without_the_index_command(
    client, fresh_database, now, boards
):
    judge = tokens.service_token_create(name="judge.example.org")[1]
    first = post_solve(client, judge, "judge-1", "2020-01-18T10:00:00+00:00")
    again = post_solve(client, judge, "judge-2", "2020-01-19T10:00:00+00:00")
    assert (first.status_code, first.json()["counted"]) == (201, True)
    assert (again.status_code, again.json()["counted"]) == (201, False)
    board = client.get("/api/v1/boards/last-7-days").json()
    assert board["total"] == 1
    assert [(row["handle"], row["score"]) for row in board["entries"]] == [("Alice", 1)]
    assert fresh_database.solves.count_documents({}) == 1


def test_the_unique_solve_key_exists_from_the_first_use_of_the_database(fresh_database):
    solve = {"programmer_id": 1, "problem": "p1", "applied": False}
    mongo.solves().insert_one(dict(solve))
    with pytest.raises(DuplicateKeyError):
        mongo.solves().insert_one(dict(solve))


def test_each_process_makes_the_indexes_once_per_database_and_only_those_that_matter(
    fresh_database, mongo_commands
):
    mongo.solves()
    made = indexed(mongo_commands)
    mongo.submissions(), mongo.requests(), mongo.solves()
    assert indexed(mongo_commands) == made  # once: later uses cost nothing
    # Unique keys and expiries of every app, not the indexes that only speed reads up.
    assert sorted(set(made)) == [
        "locks",
        "notifications",
        "prep_moved",
        "rank_history",
        "rank_samples",
        "requests",
        "scores",
        "solves",
    ]
    assert "unread" not in fresh_database.notifications.index_information()
    assert "keys_wildcard" not in fresh_database["entries.last-7-days"].index_information()


def test_a_new_client_makes_sure_again(fresh_database, embedded_server, mongo_commands):
    mongo.solves()
    mongo_commands.clear()
    other = MongoClient(embedded_server.uri, tz_aware=True, event_listeners=[mongo_commands])
    mongo.set_client(other)
    try:
        mongo.solves()
        assert "solves" in indexed(mongo_commands)
    finally:
        other.close()


def test_the_command_applies_the_indexes_every_app_declares(fresh_database, boards):
    out = StringIO()
    call_command("mongo_indexes", stdout=out)
    assert "indexes in place" in out.getvalue()
    # The embedded server reads no wildcard index: it would only cost every entry written.
    assert "keys_wildcard" not in fresh_database["entries.last-7-days"].index_information()
    assert "unread" in fresh_database.notifications.index_information()  # activity's
    submissions = fresh_database.submissions.index_information()
    assert "competitions_1_submitted_at_1" in submissions  # competitions'
    again = StringIO()
    call_command("mongo_indexes", stdout=again)
    assert again.getvalue() == out.getvalue()


def test_declaring_an_app_twice_declares_its_indexes_once():
    def declaration() -> dict[str, list[IndexModel]]:
        return {"scratch": [IndexModel([("x", 1)], unique=True)]}

    try:
        mongo.indexes_declare(declaration)
        mongo.indexes_declare(declaration)
        assert len(mongo.indexes_declared(at_first_use_only=True)["scratch"]) == 1
    finally:
        mongo.indexes._declarations.pop(declaration)


def test_the_seeds_query_gets_its_index_only_for_the_check_that_reads_it(
    fresh_database, boards, monkeypatch
):
    """Real MongoDB serves the seed's per-day query (`entries.entries_by_key`) from `keys.$**`,
    and nothing else reads it: there the command leaves it out (it would cost every solve), and
    `rebuild_boards --verify` builds it for its check and drops it after."""
    monkeypatch.setattr(mongo, "server_uses_wildcard_indexes", lambda: True)
    call_command("mongo_indexes", stdout=StringIO())
    mongo.ensure_indexes(list(boards))  # a board added in the admin

    def wildcards() -> set[str]:
        return {
            board
            for board in boards
            if "keys_wildcard" in fresh_database[f"entries.{board}"].index_information()
        }

    assert wildcards() == set()
    during = []
    real_verify = leaderboard.board_verify  # as the command asks the engine's front door
    monkeypatch.setattr(
        leaderboard, "board_verify", lambda slug: during.append(wildcards()) or real_verify(slug)
    )
    out = StringIO()
    call_command("rebuild_boards", "--verify", stdout=out)
    assert during == [set(boards)] * len(boards)
    assert "Built for the check, dropped after it: entries.last-7-days.keys_wildcard" in (
        out.getvalue()
    )
    assert wildcards() == set()


def test_an_index_of_the_seeds_query_made_before_stays(fresh_database, boards, monkeypatch):
    monkeypatch.setattr(mongo, "server_uses_wildcard_indexes", lambda: True)
    week = fresh_database["entries.last-7-days"]
    week.create_index([("keys.$**", 1)], name="keys_wildcard")
    out = StringIO()
    call_command("rebuild_boards", "--verify", "--board", "last-7-days", stdout=out)
    assert "Built for the check" not in out.getvalue()
    assert "keys_wildcard" in week.index_information()

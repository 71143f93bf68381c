"""The MongoDB storage rules, on the embedded server and on mongomock alike."""

import datetime as dt

import pytest
from pymongo.errors import DuplicateKeyError

from solutions import mongo
from solutions.leaderboard import entries


@pytest.fixture(params=["embedded", "mongomock"])
def store(request):
    return request.getfixturevalue("mongodb" if request.param == "embedded" else "mockdb")


def test_applying_the_indexes_twice_changes_nothing(store):
    first = mongo.ensure_indexes(["last-7-days"])
    second = mongo.ensure_indexes(["last-7-days"])
    assert first == second
    made = entries.entries("last-7-days").index_information()
    assert "keys_wildcard" in made and "sums_wildcard" not in made  # see `board_indexes`


def test_a_programmer_solves_a_problem_once_in_the_log(store):
    solve = {
        "programmer_id": 1,
        "problem": "p1",
        "points": 10,
        "applied": False,
        "solved_at": dt.datetime(2020, 1, 19, tzinfo=dt.UTC),
    }
    mongo.solves().insert_one(dict(solve))
    with pytest.raises(DuplicateKeyError):
        mongo.solves().insert_one(dict(solve))
    mongo.solves().insert_one({**solve, "problem": "p2"})
    assert mongo.solves().count_documents({"programmer_id": 1}) == 2

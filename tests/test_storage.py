"""The MongoDB storage rules, on the embedded server and on mongomock alike."""

import datetime as dt

import pytest
from django.test import Client
from pymongo import MongoClient, ReadPreference
from pymongo.errors import DuplicateKeyError

from solutions import mongo, tokens
from solutions.leaderboard import entries
from tests.conftest import NOW
from tests.support.commands import CommandLog


@pytest.fixture(params=["embedded", "mongomock"])
def store(request):
    return request.getfixturevalue("mongodb" if request.param == "embedded" else "mockdb")


def test_applying_the_indexes_twice_changes_nothing(store):
    first = mongo.ensure_indexes(["last-7-days"])
    second = mongo.ensure_indexes(["last-7-days"])
    assert first == second
    made = entries.entries("last-7-days").index_information()
    # See `entries.seed_query_indexes`: never `sums.$**`, and `keys.$**` only for the check that
    # reads it, even where wildcard indexes are read (mongomock says it is MongoDB).
    assert "sums_wildcard" not in made and "keys_wildcard" not in made


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


def leaf_stage(explained: dict) -> str:
    stage = explained["queryPlanner"]["winningPlan"]
    while "inputStage" in stage:
        stage = stage["inputStage"]
    return stage["stage"]


def test_the_embedded_server_scans_for_a_range_of_ids_and_a_days_key(mongodb):
    """Why the engine reads documents by `_id` and `$in` only, and keeps no wildcard index on
    the embedded server (`orders`, `entries.seed_query_indexes`, `tools/server_costs.py`): it scans
    the whole collection for a range of `_id` and for the seed's per-day query, even beside a
    `keys.$**` index. Should an upgrade of the server change that, those choices are worth
    another look."""
    things = mongodb["things"]
    things.create_index([("keys.$**", 1)])
    things.insert_many([{"_id": n, "keys": {"20000": n}} for n in range(10)])
    assert leaf_stage(things.find({"_id": {"$in": [2, 3]}}).explain()) != "COLLSCAN"
    assert leaf_stage(things.find({"_id": {"$gte": 2, "$lt": 5}}).explain()) == "COLLSCAN"
    day = things.find({"keys.20000": {"$gt": 0}}).sort("keys.20000", -1)
    assert leaf_stage(day.explain()) == "COLLSCAN"


# --- the client the site makes -------------------------------------------------------------


@pytest.fixture
def site_client(mongodb, embedded_server):
    """Make a client as the site does from a connection string (`mongo.client_create`), and
    use it for the rest of the test."""
    made = []

    def make(options: str = "") -> MongoClient:
        client = mongo.client_create(embedded_server.uri + options)
        made.append(client)
        mongo.set_client(client)
        return client

    yield make
    mongo.set_client(None)
    for client in made:
        client.close()


def test_what_the_site_acknowledges_is_written_journaled_on_a_majority(
    site_client, embedded_server, mongodb
):
    assert site_client("&w=1&journal=false").write_concern.document == {
        "w": "majority",
        "j": True,
    }
    # The site's database says so whatever client it is given (the tests' own is plain), and the
    # embedded server, a standalone, takes "majority" as itself.
    log = CommandLog()
    mongo.set_client(MongoClient(embedded_server.uri, event_listeners=[log]))
    mongo.solves().insert_one({"programmer_id": 1, "problem": "p1", "applied": False})
    mongo.requests().update_one({"_id": "r1"}, {"$set": {"state": "done"}}, upsert=True)
    sent = [command.document for command in log.named("insert") + log.named("update")]
    assert [document["writeConcern"] for document in sent] == [{"w": "majority", "j": True}] * 2
    assert mongodb.solves.count_documents({}) == mongodb.requests.count_documents({}) == 1
    mongo.get_client().close()


@pytest.mark.parametrize(
    "options, retried",
    [("", False), ("&retryWrites=true", True), ("&retrywrites=true", True)],
    ids=["unsaid: off", "the URI's own", "any case of its name"],
)
def test_the_drivers_retried_writes_are_off_unless_the_uri_asks_for_them(options, retried):
    with mongo.client_create("mongodb://db1,db2,db3/?replicaSet=rs0" + options) as client:
        assert client.options.retry_writes is retried


def test_the_engine_reads_from_the_primary_whatever_the_uri_prefers(site_client, mongodb):
    client = site_client("&readPreference=secondaryPreferred")
    assert client.read_preference == ReadPreference.SECONDARY_PREFERRED  # the URI's, for others
    assert mongo.get_db().read_preference == ReadPreference.PRIMARY
    assert mongo.solves().read_preference == ReadPreference.PRIMARY
    assert entries.entries("last-7-days").read_preference == ReadPreference.PRIMARY


# --- a sharded cluster ---------------------------------------------------------------------

# What a sharded cluster splits each collection on (docs/benchmarks.md, "Cost model: a sharded
# MongoDB cluster"): None for the small ones kept whole on the primary shard. Every board's
# `entries.<slug>` is on `_id`.
SHARD_KEYS = {
    "submissions": "programmer_id",
    "solves": "programmer_id",
    "requests": "_id",
    "import_ids": "_id",
    "orders": "_id",
    "order_sets": "_id",
    "rank_history": "_id",
    "rank_samples": "_id",
    "appliers": None,
    "board_versions": None,
    "group_names": None,
    "problem_stats": None,
    "problem_days": "_id",
    "problem_solvers": "_id",
    "locks": None,
    "activity_state": None,
}


def upserts(log: CommandLog) -> list[tuple[str, dict]]:
    """(collection, filter) of every upsert in the log, alone or in a bulk."""
    found = [
        (command.document["update"], update["q"])
        for command in log.named("update")
        for update in command.document["updates"]
        if update.get("upsert")
    ]
    return found + [
        (command.document["findAndModify"], command.document["query"])
        for command in log.named("findAndModify")
        if command.document.get("upsert")
    ]


def test_every_upsert_of_a_judges_report_and_an_answer_names_its_shard_key(
    mongodb, embedded_server, now, boards, problems, alice
):
    """A sharded cluster finds an upsert's shard from its filter: each must name the key of its
    collection (a collection missing from SHARD_KEYS must be added to it and to the README)."""
    log = CommandLog()
    mongo.set_client(MongoClient(embedded_server.uri, tz_aware=True, event_listeners=[log]))
    judge = tokens.service_token_create(name="judge")[1]
    api = Client(HTTP_AUTHORIZATION=f"Bearer {judge}")
    report = {"id": "j1", "programmer": "bob", "problem": "p2", "verdict": "accepted"}
    report["submitted_at"] = NOW.isoformat()
    assert api.post("/api/v1/submissions", report, "application/json").status_code == 201
    solve = {"id": "j2", "programmer": "bob", "problem": "p3", "solved_at": NOW.isoformat()}
    assert api.post("/api/v1/solves", solve, "application/json").status_code == 201
    browser = Client()
    browser.force_login(alice.user)
    assert browser.post("/problems/p1/", {"answer": "7"}).status_code == 302
    seen = upserts(log)
    assert "submissions" in {collection for collection, _ in seen}
    missing = [
        (collection, query)
        for collection, query in seen
        if (key := "_id" if collection.startswith("entries.") else SHARD_KEYS[collection])
        and key not in query
    ]
    assert not missing
    mongo.get_client().close()


def test_reads_and_deletes_by_many_ids_name_as_many_ids_a_command_as_the_deployment_sets(
    mongodb, embedded_server, settings
):
    """MONGODB_IDS_PER_READ sizes every `$in` on `_id` of `find_by_ids` and `delete_by_ids`:
    the embedded server's costs the square of its ids, real MongoDB's does not."""
    settings.MONGODB_IDS_PER_READ = 4
    mongodb["things"].insert_many([{"_id": n} for n in range(10)])
    log = CommandLog()
    client = MongoClient(embedded_server.uri, tz_aware=True, event_listeners=[log])
    things = client[mongodb.name]["things"]
    found = [doc["_id"] for doc in mongo.find_by_ids(things, [*range(9), 99])]
    assert mongo.delete_by_ids(things, [0, 1, 2, 3, 4, 99]) == 5
    client.close()
    assert found == list(range(9))
    pieces = [len(read.document["filter"]["_id"]["$in"]) for read in log.named("find")]
    assert pieces == [4, 4, 2]
    deletes = [
        len(d["q"]["_id"]["$in"]) for c in log.named("delete") for d in c.document["deletes"]
    ]
    assert deletes == [4, 2]
    assert sorted(doc["_id"] for doc in mongodb["things"].find()) == [5, 6, 7, 8, 9]

"""A solve through a storage fault: the request answers 503 storage_unavailable at once, a retry
of the same id finishes what the first left half done and is told it counted, a second id for the
same solve finishes it too and is told it did not, and the boards end up exactly as if nothing
had failed. Pages answer a friendly 503. A server error that passes (a write a majority did not
confirm in time, a time limit, an error labelled transient) is such a fault too."""

from __future__ import annotations

import contextlib
import datetime as dt
import threading
import time
from unittest import mock

import pytest
from django.test import Client
from pymongo import InsertOne, ReplaceOne, helpers_shared
from pymongo.errors import (
    AutoReconnect,
    BulkWriteError,
    ConnectionFailure,
    DuplicateKeyError,
    ExecutionTimeout,
    NetworkTimeout,
    NotPrimaryError,
    OperationFailure,
    WTimeoutError,
)
from pymongo.synchronous import client_bulk
from pymongo.synchronous.pool import Connection

from solutions import leaderboard, mongo, selectors, services, tokens
from solutions.leaderboard import (
    applier,
    journals,
    lease,
    order_writes,
    orders,
    reading,
    sets,
    tree,
)
from solutions.models import Board, Problem
from tests.conftest import NOW, make_programmer
from tests.support.engine import (
    closing_sql,
    every_board_shows,
    many_problems,
    orders_hold_the_entries,
    solve_on,
)


@pytest.fixture
def judge(db):
    return tokens.service_token_create(name="judge")[1]


def post_solve(client, judge, **body):
    body = {
        "id": "s1",
        "programmer": "alice",
        "problem": "p1",
        "solved_at": NOW.isoformat(),
        **body,
    }
    return client.post(
        "/api/v1/solves",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {judge}",
    )


def fail_once(module, target: str, error: Exception | None = None):
    """Make `module.target` raise `error` (a lost connection by default) the first time it is
    called."""
    real = getattr(module, target)
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise error or AutoReconnect("connection to the server was lost")
        return real(*args, **kwargs)

    return mock.patch.object(module, target, side_effect=flaky)


def orders_moved_then_lost():
    """Make the storage go away right after a batch wrote the orders (the journals), before it
    recorded what they now hold (once): its last command stops after the journals' writes,
    which come first."""
    real, calls = applier._batch_write, []

    def journals_then_lost(writes):
        calls.append(1)
        if len(calls) > 1:
            return real(writes)
        real([write for write in writes if isinstance(write, (InsertOne, ReplaceOne))])
        raise AutoReconnect("connection to the server was lost")

    return mock.patch.object(applier, "_batch_write", side_effect=journals_then_lost)


def every_board_lists(handle: str) -> dict[str, int]:
    """The score each board's first page shows today for a handle (0 when not listed)."""
    return {
        board.slug: sum(
            row.score for row in selectors.board_page(board=board).rows if row.handle == handle
        )
        for board in Board.objects.all()
    }


@pytest.mark.parametrize(
    "module, failing",
    [(mongo, "write_together"), (applier, "orders_catch_up")],
    ids=["the log and the counts", "orders_catch_up"],
)
def test_a_retry_after_a_fault_counts_the_solve_once_and_says_it_counted(
    client, mongodb, now, judge, module, failing
):
    with fail_once(module, failing):
        first = post_solve(client, judge)
        assert first.status_code == 503
        assert first.json()["error"]["code"] == "storage_unavailable"
        assert first["Retry-After"]
        retry = post_solve(client, judge)
    assert retry.status_code == 201
    assert retry.json() == {"id": "s1", "counted": True}
    assert every_board_lists("alice") == {slug: 1 for slug in every_board_lists("alice")}
    # Page 1 of every board lists her exactly once.
    for board in Board.objects.all():
        rows = selectors.board_page(board=board).rows
        assert [row.handle for row in rows] == ["alice"]


def test_another_id_for_a_half_done_solve_finishes_it_and_is_told_it_did_not_count(
    client, mongodb, now, judge
):
    with fail_once(applier, "orders_catch_up"):
        assert post_solve(client, judge).status_code == 503
    other = post_solve(client, judge, id="s2")
    assert other.json() == {"id": "s2", "counted": False}
    assert set(every_board_lists("alice").values()) == {1}
    # The first id's retry is still told that it counted.
    assert post_solve(client, judge).json() == {"id": "s1", "counted": True}


def test_a_half_done_solve_is_finished_by_the_repair_task_with_no_request(
    client, mongodb, now, judge
):
    with fail_once(applier, "orders_catch_up"):
        assert post_solve(client, judge).status_code == 503
    assert set(every_board_lists("alice").values()) == {0}  # counted, not yet listed
    now.shift(dt.timedelta(minutes=5))
    services.solves_repair()  # beat's task, two minutes on
    assert set(every_board_lists("alice").values()) == {1}


def test_a_batch_that_meets_an_applier_outliving_its_lease_waits_and_moves_once(
    client, mongodb, now, judge
):
    """An applier that outlived its lease wrote a journal first: the batch's compare-and-swap
    fails (`OrdersConflict`). The solve is not an error: the batch gives the lease back with
    Alice pending, takes it again and moves her, and every board lists her once."""
    conflict = orders.OrdersConflict("a manifest changed since it was read")
    with fail_once(applier, "_batch_write", conflict) as swap:
        response = post_solve(client, judge, id="s1", problem="p1")
    assert response.status_code == 201 and response.json()["counted"] is True
    assert swap.call_count >= 2
    every_board_shows({b.slug: b for b in Board.objects.all()}, [("alice", 1)])
    assert mongodb.solves.count_documents({"applied": True}) == 1


def test_a_batch_whose_entries_a_stale_applier_overtook_moves_nobody_out_twice(
    mongodb, now, boards, alice, bob, charlie, monkeypatch
):
    """An applier recorded Alice's move in the journals and stopped before recording what the
    orders hold for her (its lease then ran out). The next holder reads the entries, and before
    it reads the journals the stale applier wakes up, records her and folds the journals: the
    entries said less than the journals by then. The holder sees the journals changed since it
    read the entries, gives the lease back, and its next try moves Alice from where the orders
    hold her: every order holds every entry once."""
    monkeypatch.setattr(journals, "JOURNAL_MAX", 0)  # every batch folds
    monkeypatch.setattr(orders, "INLINE_MAX", 0)  # members leave sets unread, by gone lists
    problems = many_problems(2)
    solve_on(alice, problems[0], NOW - dt.timedelta(hours=2))
    solve_on(bob, problems[0], NOW - dt.timedelta(hours=1))
    solve_on(charlie, problems[0], NOW - dt.timedelta(hours=3))  # stays where Alice was
    with orders_moved_then_lost(), pytest.raises(AutoReconnect):
        solve_on(alice, problems[1], NOW)
    real_read, woke = journals.journals_read, []

    def stale_applier_wakes(*args):
        if not woke:
            woke.append(1)
            with mock.patch.object(journals, "journals_read", real_read):
                heads = journals.journal_heads(boards)
                applier._batch_write(applier._orders_apply({(s, alice.pk) for s in boards}, heads))
        return real_read(*args)

    with mock.patch.object(journals, "journals_read", side_effect=stale_applier_wakes):
        solve_on(bob, problems[1], NOW)
    assert woke
    today = leaderboard.epoch_day(NOW, "UTC")
    for board in boards.values():
        orders_hold_the_entries(board, range(today, today + board.spec.span))
    every_board_shows(boards, [("Alice", 2), ("bob", 2), ("charlie", 1)])


@pytest.mark.parametrize("journal_max", [1024, 0], ids=["journal", "folded every solve"])
def test_a_batch_cut_short_after_moving_the_orders_leaves_no_second_row(
    client, mongodb, now, judge, monkeypatch, journal_max
):
    """The orders moved Alice, then the storage went away before that was recorded, and she
    solves again before the failed request is retried: the next batch takes out the row the cut
    batch placed, so every board lists her once."""
    monkeypatch.setattr(journals, "JOURNAL_MAX", journal_max)
    assert post_solve(client, judge, id="s1", problem="p1").status_code == 201
    with orders_moved_then_lost():
        assert post_solve(client, judge, id="s2", problem="p2").status_code == 503
    assert post_solve(client, judge, id="s3", problem="p3").status_code == 201
    assert post_solve(client, judge, id="s2", problem="p2").json() == {"id": "s2", "counted": True}
    for board in Board.objects.all():
        rows = selectors.board_page(board=board).rows
        assert [(row.handle, row.score) for row in rows] == [("alice", 3)], board.slug


def test_a_request_stops_when_the_server_restarts_under_it(client, mongodb, now, judge):
    """A restarted server may have lost what the request wrote a moment before: the rest of
    the request answers 503 instead of building on it, and the retry starts afresh."""
    lives = iter(["first life", "first life"])
    restart = mock.patch.object(
        mongo.client, "_server_life", side_effect=lambda _: next(lives, "second")
    )
    with restart:
        response = post_solve(client, judge)
    assert (response.status_code, response["Retry-After"]) == (503, "5")
    assert post_solve(client, judge).json() == {"id": "s1", "counted": True}
    assert set(every_board_lists("alice").values()) == {1}


# --- what the server answers: transient errors -------------------------------------------------

# The primary wrote it, but a majority did not confirm it within `wtimeout`.
WTIMEOUT = {
    "ok": 1.0,
    "writeConcernError": {
        "code": 64,
        "codeName": "WriteConcernFailed",
        "errmsg": "waiting for replication timed out",
        "errInfo": {"wtimeout": True},
    },
}
TIME_LIMIT = {"ok": 0.0, "code": 50, "codeName": "MaxTimeMSExpired", "errmsg": "time limit"}
EXCEEDED = {"ok": 0.0, "code": 262, "codeName": "ExceededTimeLimit", "errmsg": "too long"}
LABELLED = {
    "ok": 0.0,
    "code": 112,
    "codeName": "WriteConflict",
    "errmsg": "write conflict",
    "errorLabels": ["TransientTransactionError"],
}


@contextlib.contextmanager
def server_answers_once(command: str, collection: str, reply: dict) -> list[dict]:
    """The server's answer to the first `command` on `collection` is `reply`, read by pymongo
    as off the wire: `ok: 1` replies after the command ran (a write concern error: the write is
    done, its confirmation is not), others instead of it. Yields the commands so answered."""
    real, answered = Connection.command, []

    def command_once(self, dbname, spec, *args, **kwargs):
        if answered or spec.get(command) != collection:
            return real(self, dbname, spec, *args, **kwargs)
        answered.append(spec)
        done = real(self, dbname, spec, *args, **kwargs) if reply["ok"] else {}
        answer = {**done, **reply}
        parse = kwargs.get("parse_write_concern_error", False)
        helpers_shared._check_command_response(answer, self.max_wire_version, None, parse)
        return answer

    with mock.patch.object(Connection, "command", command_once):
        yield answered


@contextlib.contextmanager
def server_answers_bulk_once(reply: dict) -> list[dict]:
    """`server_answers_once` for the first command of writes to several collections
    (`bulkWrite`, `mongo.write_together`: a solve's log and counts)."""
    real, answered = client_bulk.run_bulk_write_command, []

    def bulk_once(bwc, cmd, *args, **kwargs):
        if answered:
            return real(bwc, cmd, *args, **kwargs)
        answered.append(cmd)
        if not reply["ok"]:
            helpers_shared._check_command_response(reply, bwc.conn.max_wire_version)
        docs, *rest = real(bwc, cmd, *args, **kwargs)
        return [{**docs[0], **reply}, *docs[1:]], *rest

    with mock.patch.object(client_bulk, "run_bulk_write_command", bulk_once):
        yield answered


@pytest.mark.parametrize(
    "reply",
    [WTIMEOUT, TIME_LIMIT, EXCEEDED, LABELLED],
    ids=["wtimeout", "time limit", "exceeded time limit", "labelled transient"],
)
def test_a_solve_whose_write_meets_a_transient_server_error_answers_503_and_the_retry_counts(
    client, mongodb, now, judge, reply
):
    with server_answers_bulk_once(reply) as answered:  # the log and the counts
        first = post_solve(client, judge)
    assert answered, "the solve's write met the error"
    assert first.status_code == 503
    assert first.json()["error"]["code"] == "storage_unavailable"
    assert first["Retry-After"] == "5"
    retry = post_solve(client, judge)
    assert (retry.status_code, retry.json()) == (201, {"id": "s1", "counted": True})
    assert set(every_board_lists("alice").values()) == {1}


def test_an_answer_whose_write_a_majority_did_not_confirm_gets_the_friendly_503_page(
    mongodb, now, problems, alice, boards
):
    browser = Client()
    browser.force_login(alice.user)
    with server_answers_bulk_once(WTIMEOUT) as answered:  # the log and the counts
        response = browser.post(f"/problems/{problems[0].slug}/", {"answer": "7"})
    assert answered
    assert (response.status_code, response["Retry-After"]) == (503, "5")
    assert "Back in a moment" in response.content.decode()
    browser.post(f"/problems/{problems[0].slug}/", {"answer": "7"})  # sent again
    assert set(every_board_lists("Alice").values()) == {1}


def labelled(error: OperationFailure, label: str) -> OperationFailure:
    error._add_error_label(label)
    return error


TRANSIENT = {
    "connection lost": AutoReconnect("connection reset"),
    "network timeout": NetworkTimeout("timed out"),
    "not primary": NotPrimaryError("not primary", {"code": 10107}),
    "wtimeout": WTimeoutError("waiting for replication timed out", 64, {}),
    "time limit": ExecutionTimeout("time limit", 50, {}),
    "primary stepped down (a bare code)": OperationFailure("stepped down", 189, {}),
    "labelled transient": labelled(
        OperationFailure("conflict", 112, {}), "TransientTransactionError"
    ),
    "labelled retryable": labelled(OperationFailure("retry", 2, {}), "RetryableWriteError"),
    "a bulk's write concern error": BulkWriteError({"writeErrors": [], "writeConcernErrors": [{}]}),
}
BUGS = {
    "a bulk's duplicate key": BulkWriteError({"writeErrors": [{"code": 11000}]}),
    "duplicate key": DuplicateKeyError("duplicate key", 11000, {}),
    "bad command": OperationFailure("bad command", 2, {}),
    "not the storage": ValueError("not the storage"),
}


@pytest.mark.parametrize(
    "error, transient",
    [(error, True) for error in TRANSIENT.values()] + [(error, False) for error in BUGS.values()],
    ids=[*TRANSIENT, *BUGS],
)
def test_transient_storage_errors_are_told_from_bugs(error, transient):
    assert mongo.is_transient(error) is transient


def test_a_page_answers_a_friendly_503_when_the_storage_is_out_of_reach(client, mongodb, now):
    with mock.patch.object(reading, "order_page", side_effect=AutoReconnect("lost")):
        response = client.get("/leaderboard/")
    assert response.status_code == 503
    assert response["Retry-After"]
    assert response["X-Error-Code"] == "storage_unavailable"  # as the API's body says it
    assert "Back in a moment" in response.content.decode()


@pytest.mark.parametrize("levels", [False, True], ids=["nodes kept", "nodes cut by every fold"])
@pytest.mark.parametrize("stops", [1, 2])
def test_an_applier_stopped_between_sets_and_manifests_leaves_every_member_once(
    mongodb, now, boards, alice, bob, charlie, monkeypatch, stops, levels
):
    """A fold of the journals stops with its sets written and its manifests not; then Alice
    solves again (and with two stops, that batch, which finishes the stopped fold first, stops
    too before writing anything): the next batch folds again, taking each member the journals
    place out of their set before putting them in, so everybody is held once."""
    monkeypatch.setattr(sets, "SET_MAX", 2)
    monkeypatch.setattr(sets, "SET_FILL", 2)
    monkeypatch.setattr(sets, "ARRIVALS_MAX", 0)  # every member is written into its set
    monkeypatch.setattr(orders, "INLINE_MAX", 0)
    monkeypatch.setattr(journals, "JOURNAL_MAX", 0)  # every batch folds into the manifests
    if levels:  # nodes of one set: every fold cuts the node anew (see `tree`)
        monkeypatch.setattr(tree, "NODE_MAX", 1)
        monkeypatch.setattr(tree, "NODE_FILL", 2)
    problems = [Problem.objects.create(slug=f"f{i}", title=f"F{i}", answer="1") for i in range(5)]
    for n, programmer in enumerate([alice, bob, charlie, alice]):
        services.solve_record(
            programmer=programmer, problem=problems[n], solved_at=NOW - dt.timedelta(hours=n)
        )
    real_swap, real_move, moves = order_writes.manifests_swap, order_writes.manifests_move, []

    def stopped_before_the_manifests(swaps):
        if len(moves) == 1 and not swaps[0][0].endswith("|journal"):
            raise AutoReconnect("connection to the server was lost")
        return real_swap(swaps)

    def stopped_before_the_sets(*args):
        moves.append(1)
        if len(moves) == 2 and stops == 2:
            raise AutoReconnect("connection to the server was lost")
        return real_move(*args)

    with (
        mock.patch.object(order_writes, "manifests_swap", side_effect=stopped_before_the_manifests),
        mock.patch.object(order_writes, "manifests_move", side_effect=stopped_before_the_sets),
    ):
        for n in range(stops):
            with pytest.raises(AutoReconnect):
                services.solve_record(programmer=alice, problem=problems[1 + n], solved_at=NOW)
        services.solve_record(programmer=alice, problem=problems[4], solved_at=NOW)
    today = leaderboard.epoch_day(NOW, "UTC")
    for board in boards.values():
        orders_hold_the_entries(board, range(today, today + board.spec.span))
    assert (
        selectors.programmer_standing(board=boards["all-time"], programmer=alice).score == 3 + stops
    )
    # Sets stored outside their root are listed through a level of nodes at least.
    assert mongodb.orders.find_one({"lvl": {"$gte": 1}})


@pytest.mark.parametrize("levels", [False, True], ids=["one level of nodes", "several levels"])
@pytest.mark.parametrize("finisher", ["next batch", "repair task"])
@pytest.mark.parametrize("stopped", ["manifests_move", "emptying the journal"])
def test_a_fold_stopped_midway_is_finished_later_and_moves_nobody_twice(
    mongodb, now, boards, alice, bob, charlie, monkeypatch, stopped, finisher, levels
):
    """Three programmers' moves wait in the journals; a solve folds them into the manifests and
    the storage goes away before the manifests are written, or after, before the journals are
    emptied. Pages stay right meanwhile, and the next batch, or else the repair task, finishes
    the fold: every order holds every entry once."""
    # Sets written as members arrive, so a fold done twice would count a member twice.
    monkeypatch.setattr(sets, "ARRIVALS_MAX", 2)
    monkeypatch.setattr(orders, "INLINE_MAX", 0)
    if levels:  # members in sets of 1 under nodes of nodes (see `tree`)
        monkeypatch.setattr(sets, "SET_MAX", 1)
        monkeypatch.setattr(tree, "NODE_MAX", 1)
        monkeypatch.setattr(tree, "NODE_FILL", 2)
    problems = [Problem.objects.create(slug=f"f{i}", title=f"F{i}", answer="1") for i in range(6)]
    for n, programmer in enumerate([alice, bob, charlie, alice]):
        services.solve_record(
            programmer=programmer, problem=problems[n], solved_at=NOW - dt.timedelta(hours=n)
        )
    monkeypatch.setattr(journals, "JOURNAL_MAX", 0)  # the next batch folds
    if stopped == "manifests_move":
        cut = fail_once(order_writes, "manifests_move")
    else:
        real_swap = journals.journals_swap

        def emptying_fails(swaps):
            if any(update["$set"].get("n") == 0 for _board, _v, update in swaps):
                raise AutoReconnect("connection to the server was lost")
            return real_swap(swaps)

        cut = mock.patch.object(journals, "journals_swap", side_effect=emptying_fails)
    with cut, pytest.raises(AutoReconnect):
        services.solve_record(programmer=bob, problem=problems[4], solved_at=NOW)
    today = leaderboard.epoch_day(NOW, "UTC")
    for board in boards.values():
        assert sorted(row.handle for row in selectors.board_page(board=board).rows) == [
            "Alice",
            "bob",
            "charlie",
        ]
    monkeypatch.setattr(journals, "JOURNAL_MAX", 1024)  # the fold is finished all the same
    if finisher == "repair task":  # nobody solves meanwhile: beat's task, minutes later
        now.shift(dt.timedelta(minutes=5))
        services.solves_repair()
    else:
        services.solve_record(programmer=charlie, problem=problems[5], solved_at=NOW)
    assert not any(j.get("folding") for j in mongodb.orders.find({"_id": {"$regex": "journal$"}}))
    if finisher == "repair task":
        services.solve_record(programmer=charlie, problem=problems[5], solved_at=NOW)
    for board in boards.values():
        orders_hold_the_entries(board, range(today, today + board.spec.span))
    all_time = boards["all-time"]
    scores = {
        p.handle: selectors.programmer_standing(board=all_time, programmer=p).score
        for p in (alice, bob, charlie)
    }
    assert scores == {"Alice": 2, "bob": 2, "charlie": 2}
    assert mongodb.orders.find_one({"lvl": 1})
    assert bool(mongodb.orders.find_one({"lvl": {"$gte": 2}})) == levels


def test_a_fault_met_by_the_driver_fails_every_solve_waiting_with_it_and_each_retry_counts_once(
    mongodb, boards, alice, bob, charlie, now, monkeypatch
):
    """Another process holds the lease, and three solves wait in this process with one driver.
    The driver's look meets a lost connection: all three fail with it at once (none meets it again
    in turn, a timeout each), and a retry of each counts it once on every board."""
    holder, _pending = lease.take("another process", [])
    assert holder
    real_look, looks = lease.pending_now, []

    def lost_once_all_wait():
        looks.append(1)
        deadline = time.monotonic() + 10
        while len(applier._TURNS.unsettled()) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        raise AutoReconnect("connection to the server was lost")

    monkeypatch.setattr(lease, "pending_now", lost_once_all_wait)
    problem = many_problems(1)[0]
    people = [alice, bob, charlie]
    failures = {}

    def solve(programmer):
        try:
            solve_on(programmer, problem, NOW)
        except ConnectionFailure as error:
            failures[programmer.handle] = error

    threads = [threading.Thread(target=closing_sql(solve), args=(p,)) for p in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert sorted(failures) == sorted(p.handle for p in people)
    assert len(looks) == 1
    monkeypatch.setattr(lease, "pending_now", real_look)
    lease.release("another process", None)
    for programmer in people:
        solve_on(programmer, problem, NOW)  # the retry finishes the logged solve
    every_board_shows(boards, [("Alice", 1), ("bob", 1), ("charlie", 1)])
    assert mongodb.solves.count_documents({"applied": True}) == 3


@pytest.mark.parametrize("levels", [False, True], ids=["one level of nodes", "several levels"])
def test_a_fold_stopped_after_writing_gone_lists_takes_nobody_out_twice(
    mongodb, now, boards, monkeypatch, levels
):
    """Twelve programmers in sets of 4; each solve folds at once, so a solve takes its programmer
    out of a set by a gone list (the set unread) and its new place waits among the arrivals. A
    fold stops after writing the gone lists and the nodes, before the roots: the next fold, sure
    of nothing in the nodes that fold wrote, reads those sets whole, and every order holds every
    programmer once."""
    monkeypatch.setattr(sets, "SET_MAX", 4)
    monkeypatch.setattr(sets, "SET_FILL", 4)
    monkeypatch.setattr(orders, "INLINE_MAX", 0)
    monkeypatch.setattr(journals, "JOURNAL_MAX", 0)  # every batch folds
    if levels:
        monkeypatch.setattr(tree, "NODE_MAX", 2)
        monkeypatch.setattr(tree, "NODE_FILL", 2)
    people = [make_programmer(f"p{n:02d}") for n in range(12)]
    problems = [Problem.objects.create(slug=f"g{i}", title=f"G{i}", answer="1") for i in range(4)]
    monkeypatch.setattr(sets, "ARRIVALS_MAX", 0)  # written into their sets as they arrive
    for n, programmer in enumerate(people):
        services.solve_record(
            programmer=programmer, problem=problems[0], solved_at=NOW - dt.timedelta(minutes=n)
        )
    monkeypatch.setattr(sets, "ARRIVALS_MAX", 48)  # from now on they wait among the arrivals
    real_move, lost = (
        order_writes.manifests_move,
        AutoReconnect("connection to the server was lost"),
    )

    def stopped_before_the_roots(folding, frontiers):
        with mock.patch.object(order_writes, "manifests_swap", side_effect=lost):
            real_move(folding, frontiers)

    with mock.patch.object(order_writes, "manifests_move", side_effect=stopped_before_the_roots):
        with pytest.raises(AutoReconnect):
            services.solve_record(programmer=people[5], problem=problems[1], solved_at=NOW)
    assert mongodb.order_sets.find_one({"g": {"$exists": True}}), "the fold wrote gone lists"
    services.solve_record(programmer=people[7], problem=problems[1], solved_at=NOW)
    services.solve_record(programmer=people[5], problem=problems[2], solved_at=NOW)
    today = leaderboard.epoch_day(NOW, "UTC")
    for board in boards.values():
        orders_hold_the_entries(board, range(today, today + board.spec.span))
    assert bool(mongodb.orders.find_one({"lvl": {"$gte": 2}})) == levels

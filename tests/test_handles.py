"""Look-alike handles: nobody signs up as ``dem0`` beside ``demo``, nor as ``CaseUserl`` or
``CaseUserI`` beside ``CaseUser1``; a judge may still report any existing programmer in any case,
but cannot register a new handle that looks like a taken one. Demo and CaseUser1 are on the
boards already."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from solutions import tokens
from solutions.models import Programmer
from solutions.rules import HANDLE_LOOK_ALIKES, handle_skeleton
from tests.conftest import make_programmer

PASSWORD = "a long and unusual passphrase"


@pytest.fixture
def taken(db) -> list[Programmer]:
    return [make_programmer("demo"), make_programmer("CaseUser1"), make_programmer("mike_w")]


def sign_up(handle: str):
    data = {"username": handle, "password1": PASSWORD, "password2": PASSWORD}
    return Client().post("/accounts/signup/", data)


def handle_errors(response) -> str:
    found = re.search(r'<ul class="errors" id="id_username_error">(.*?)</ul>', response.text)
    return found.group(1) if found else ""


@pytest.mark.parametrize(
    ("handle", "looks_like"),
    [
        ("dem0", "demo"),
        ("DEM0", "demo"),
        ("CaseUserl", "CaseUser1"),
        ("CaseUserI", "CaseUser1"),
        ("caseuseri", "CaseUser1"),
        ("rnike_vv", "mike_w"),
        ("clemo", "demo"),
    ],
)
def test_sign_up_refuses_a_handle_that_looks_like_a_taken_one(taken, handle, looks_like):
    response = sign_up(handle)
    assert response.status_code == 400
    assert f"That handle looks like {looks_like}, which is taken" in handle_errors(response)
    assert not Programmer.objects.handle_is(handle).exists()


@pytest.mark.parametrize("handle", ["demos", "dem0n", "CaseUser2", "mike"])
def test_a_handle_that_reads_differently_signs_up(taken, handle):
    assert sign_up(handle).status_code == 302
    assert Programmer.objects.handle_is(handle).get().handle_skeleton == handle_skeleton(handle)


def test_a_skeleton_folds_case_and_look_alike_characters_and_is_its_own_skeleton():
    assert handle_skeleton("dem0") == handle_skeleton("demo") == handle_skeleton("DEMO")
    assert len({handle_skeleton(h) for h in ("CaseUser1", "CaseUserl", "CaseUserI")}) == 1
    assert handle_skeleton("CaseUser1") != handle_skeleton("CaseUser2")
    assert handle_skeleton("a_b") != handle_skeleton("a-b")
    for replacement in HANDLE_LOOK_ALIKES.values():  # a skeleton's skeleton is itself
        assert handle_skeleton(replacement) == replacement


def test_a_renamed_programmer_gets_the_skeleton_of_the_new_handle(taken):
    demo = taken[0]
    demo.handle = "Dana"
    demo.save()
    assert Programmer.objects.get(pk=demo.pk).handle_skeleton == "clana"
    assert sign_up("dem0").status_code == 302  # "demo" is free, and nothing looks like it


# --- judges ------------------------------------------------------------------------------------


def report(client: Client, token: str, handle: str, key: str, path: str = "/api/v1/solves"):
    body = {"id": key, "programmer": handle, "problem": "p1"}
    if path == "/api/v1/solves":
        body["solved_at"] = "2020-01-19T11:00:00Z"
    else:
        body |= {"verdict": "accepted", "submitted_at": "2020-01-19T11:00:00Z"}
    return client.post(
        path, body, content_type="application/json", headers={"Authorization": f"Bearer {token}"}
    )


@pytest.mark.parametrize("path", ["/api/v1/solves", "/api/v1/submissions"])
def test_a_judge_reports_a_taken_handle_in_any_case_but_registers_no_look_alike(
    client, mongodb, now, boards, taken, path
):
    judge = tokens.service_token_create(name="judge")[1]
    assert report(client, judge, "DEMO", "1", path).status_code == 201
    refused = report(client, judge, "dem0", "2", path)
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert error["code"] == "handle_looks_taken" and "demo" in error["message"]
    assert not Programmer.objects.handle_is("dem0").exists()
    # The id stays unused: the judge sends it again with the handle it meant.
    assert report(client, judge, "demo", "2", path).status_code == 201
    assert report(client, judge, "brand-new", "3", path).status_code == 201


# --- the migration -----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_migration_fills_the_skeletons_and_marks_the_deleted_accounts():
    before, after = (
        [("solutions", "0009_login_name_index")],
        [("solutions", "0010_programmer_handle_skeleton_deleted_at")],
    )
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("solutions", "Programmer")
    demo = old.objects.create(handle="Dem0")
    gone = old.objects.create(handle="placeholder", hidden=True)
    old.objects.filter(pk=gone.pk).update(handle=f"deleted-{gone.pk}")
    squatter = old.objects.create(handle=f"deleted-{gone.pk + 1000}", hidden=True)
    try:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(after)
        new = executor.loader.project_state(after).apps.get_model("solutions", "Programmer")
        assert new.objects.get(pk=demo.pk).handle_skeleton == "clerno"
        assert new.objects.get(pk=gone.pk).deleted_at is not None
        assert new.objects.get(pk=demo.pk).deleted_at is None
        assert new.objects.get(pk=squatter.pk).deleted_at is None  # not its own id: not deleted
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())

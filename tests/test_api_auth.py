"""Tokens: programmers trade a password for a one-hour access token to read their own standing
(JSON only, never from another site's page, and ended by a new password); staff make service
tokens for judges, shown once and stored hashed."""

from __future__ import annotations

import datetime as dt
import hashlib
import json

import pytest
from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.core import signing
from django.core.management import call_command
from django.test import Client
from django.utils.http import urlsafe_base64_encode

from solutions import services, tokens
from solutions.models import ServiceToken
from tests.conftest import NOW

PASSWORD = "correct horse battery"
NEW_PASSWORD = "a brand new passphrase"


@pytest.fixture
def solved(mongodb, now, problems, alice, bob):
    services.solve_record(
        programmer=bob, problem=problems[0], solved_at=NOW - dt.timedelta(hours=2)
    )
    services.solve_record(
        programmer=bob, problem=problems[1], solved_at=NOW - dt.timedelta(hours=2)
    )
    services.solve_record(programmer=alice, problem=problems[0], solved_at=NOW)


def login(client, username: str = "alice", password: str = PASSWORD, **extra):
    return client.post(
        "/api/v1/auth/token",
        {"username": username, "password": password},
        content_type="application/json",
        **extra,
    )


def me(client, token: str, query: str = ""):
    return client.get(f"/api/v1/me{query}", headers={"Authorization": f"Bearer {token}"})


def error_of(response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def test_a_programmer_trades_a_password_for_a_one_hour_token(client, solved):
    response = login(client)
    assert response.status_code == 200
    body = response.json()
    assert dt.datetime.fromisoformat(body["expires_at"]) == NOW + dt.timedelta(hours=1)
    standing = me(client, body["token"]).json()
    assert (standing["handle"], standing["rank"], standing["score"]) == ("Alice", 2, 1)
    assert standing["above"] == [{"rank": 1, "handle": "bob", "score": 2}]


def test_the_username_is_matched_in_any_case_like_a_handle(client, solved):
    token = login(client, "ALICE").json()["token"]
    assert me(client, token).json()["handle"] == "Alice"


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ("username=alice&password=guess", "application/x-www-form-urlencoded"),
        (json.dumps({"username": "alice", "password": "guess"}), "text/plain"),
        (
            "--b\r\nContent-Disposition: form-data; name=username\r\n\r\nalice\r\n--b--",
            "multipart/form-data; boundary=b",
        ),
    ],
    ids=["form", "JSON as text/plain", "multipart form"],
)
def test_only_json_is_taken_so_another_sites_form_cannot_lock_anybody_out(
    client, solved, body, content_type
):
    """A page anywhere can make its visitors' browsers post a form (or text) here, but not
    JSON: refused before the password is checked, such posts lock nobody out."""
    for _ in range(settings.AXES_FAILURE_LIMIT + 1):
        response = client.post("/api/v1/auth/token", body, content_type=content_type)
        assert error_of(response) == (415, "unsupported_media_type")
    assert login(client).status_code == 200


def test_a_request_the_browser_marks_cross_site_is_refused(client, solved):
    cross_site = {"headers": {"Sec-Fetch-Site": "cross-site"}}
    for _ in range(settings.AXES_FAILURE_LIMIT + 1):
        assert error_of(login(client, password="guess", **cross_site)) == (
            403,
            "cross_site_request",
        )
    assert error_of(login(client, **cross_site)) == (403, "cross_site_request")
    for same in ("same-origin", "none"):  # the site's own page; an app or a typed request
        assert login(client, headers={"Sec-Fetch-Site": same}).status_code == 200


def test_a_changed_password_ends_the_tokens_made_before_it(client, solved, alice):
    token = login(client).json()["token"]
    owner = Client()
    owner.force_login(alice.user)
    data = {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    assert owner.post("/accounts/password_change/", data).status_code == 302
    assert error_of(me(client, token)) == (401, "unauthorized")
    assert me(client, login(client, password=NEW_PASSWORD).json()["token"]).status_code == 200


def test_a_reset_password_ends_the_tokens_made_before_it(client, solved, alice):
    token = login(client).json()["token"]
    alice.user.refresh_from_db()  # the login stamped last_login, which reset links depend on
    uid = urlsafe_base64_encode(str(alice.user.pk).encode())
    link = f"/accounts/reset/{uid}/{default_token_generator.make_token(alice.user)}/"
    owner = Client()
    form = owner.get(link, follow=True)
    set_password = form.redirect_chain[-1][0]
    data = {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    assert owner.post(set_password, data).status_code == 302
    assert error_of(me(client, token)) == (401, "unauthorized")
    assert me(client, login(client, password=NEW_PASSWORD).json()["token"]).status_code == 200


def test_me_answers_for_another_board_when_asked(client, solved):
    token = login(client).json()["token"]
    assert me(client, token, "?board=all-time").json()["board"] == "all-time"
    assert error_of(me(client, token, "?board=nope")) == (404, "unknown_board")
    assert error_of(me(client, token, "?date=someday")) == (400, "bad_date")


def test_an_account_without_a_programmer_profile_gets_a_404(client, solved, staff):
    token = login(client, "staff").json()["token"]
    assert error_of(me(client, token)) == (404, "no_programmer")


@pytest.mark.parametrize(
    ("username", "password"), [("alice", "wrong"), ("nobody", PASSWORD), ("ALICE", "x")]
)
def test_wrong_credentials_are_401(client, solved, username, password):
    assert error_of(login(client, username, password)) == (401, "invalid_credentials")


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"username": "alice"},
        {"username": ["alice"], "password": PASSWORD},
        {"username": "alice", "password": {"$ne": ""}},
        {"username": "", "password": PASSWORD},
    ],
)
def test_missing_or_mistyped_credentials_are_400(client, solved, body):
    response = client.post("/api/v1/auth/token", body, content_type="application/json")
    assert error_of(response) == (400, "invalid_body")


def test_malformed_json_credentials_are_400(client, db):
    response = client.post("/api/v1/auth/token", "{", content_type="application/json")
    assert error_of(response) == (400, "malformed_json")


def test_the_token_expires_after_an_hour(client, solved, now):
    token = login(client).json()["token"]
    now.shift(dt.timedelta(minutes=59))
    assert me(client, token).status_code == 200
    now.shift(dt.timedelta(minutes=2))
    assert error_of(me(client, token)) == (401, "unauthorized")


def test_tokens_without_an_expiry_or_tampered_with_are_refused(client, solved, alice):
    no_expiry = signing.dumps({"uid": alice.user.pk}, salt=tokens.ACCESS_TOKEN_SALT)
    unsigned_time = signing.Signer(salt=tokens.ACCESS_TOKEN_SALT).sign_object(
        {"uid": alice.user.pk, "exp": 2**40}
    )
    other_purpose = signing.dumps(
        {"uid": alice.user.pk, "exp": int(NOW.timestamp()) + 60}, salt="another.salt"
    )
    good = login(client).json()["token"]
    tampered = good[:-2] + ("AA" if not good.endswith("AA") else "BB")
    for token in [no_expiry, unsigned_time, other_purpose, tampered, "", "x" * 5000]:
        assert error_of(me(client, token)) == (401, "unauthorized")


def test_a_deactivated_account_loses_its_token(client, solved, alice):
    token = login(client).json()["token"]
    alice.user.is_active = False
    alice.user.save()
    assert error_of(me(client, token)) == (401, "unauthorized")


def test_a_session_or_a_service_token_is_not_an_access_token(client, solved, alice):
    client.force_login(alice.user)
    assert error_of(client.get("/api/v1/me")) == (401, "unauthorized")
    service = tokens.service_token_create(name="judge")[1]
    assert error_of(me(client, service)) == (401, "unauthorized")


def test_an_access_token_cannot_post_solves(client, solved):
    token = login(client).json()["token"]
    response = client.post(
        "/api/v1/solves",
        {"id": "1", "programmer": "Alice", "problem": "p2", "solved_at": "2020-01-19T11:00Z"},
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert error_of(response) == (401, "unauthorized")


def test_repeated_failed_logins_are_slowed_down(client, solved):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert error_of(login(client, password="guess")) == (401, "invalid_credentials")
    assert error_of(login(client, password="guess")) == (429, "too_many_attempts")
    locked = login(client)  # even the right password, for a while
    assert error_of(locked) == (429, "too_many_attempts")
    assert int(locked["Retry-After"]) > 0
    assert login(client, "bob").status_code == 200  # somebody else is not locked out


def test_a_successful_login_clears_the_failures(client, solved):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        login(client, password="guess")
    assert login(client).status_code == 200
    assert login(client, password="guess").status_code == 401
    assert login(client).status_code == 200


# --- service tokens ------------------------------------------------------------------------


def test_create_service_token_prints_the_token_last_and_stores_only_its_hash(
    client, solved, capsys
):
    call_command("create_service_token", "judge.example.org")
    token = capsys.readouterr().out.strip().splitlines()[-1]
    stored = ServiceToken.objects.get(name="judge.example.org")
    assert stored.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert not ServiceToken.objects.filter(token_hash__contains=token).exists()
    response = client.post(
        "/api/v1/solves",
        {"id": "1", "programmer": "Alice", "problem": "p2", "solved_at": "2020-01-19T11:00Z"},
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 201


def test_staff_make_a_service_token_in_the_admin_and_see_it_once(client, solved, staff):
    client.force_login(staff)
    response = client.post(
        "/admin/solutions/servicetoken/add/", {"name": "games server", "active": "on"}, follow=True
    )
    shown = " ".join(str(message) for message in response.context["messages"])
    token = next(word for word in shown.split() if word.startswith(tokens.SERVICE_TOKEN_PREFIX))
    assert token in response.content.decode()
    stored = ServiceToken.objects.get(name="games server")
    assert stored.created_by == staff
    assert tokens.service_token_authenticate(token=token) == stored
    # Only once: neither the token nor its hash appears anywhere later.
    page = client.get(f"/admin/solutions/servicetoken/{stored.pk}/change/").content.decode()
    assert token not in page
    assert stored.token_hash not in page

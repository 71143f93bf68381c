"""Guessing passwords: the login page, the admin's and POST /api/v1/auth/token share one count of
failures per (username, client address); past the limit even the right password is refused for
a while, while the same account from elsewhere and other accounts from here are not. A login
name is a handle, matched in any case as handles are unique: every way in takes ``caseuser1``
for ``CaseUser1``, and guesses in any case count as one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client, RequestFactory

from leaderboard_site.logins import client_ip
from solutions import services

PASSWORD = "correct horse battery"
ATTACKER = "203.0.113.7"
OWNER = "198.51.100.9"
PROXY = "10.0.0.2"


def page_login(client: Client, username: str, password: str, **extra):
    return client.post("/accounts/login/", {"username": username, "password": password}, **extra)


def admin_login(client: Client, username: str, password: str, **extra):
    data = {"username": username, "password": password, "next": "/admin/"}
    return client.post("/admin/login/", data, **extra)


def api_login(client: Client, username: str, password: str, **extra):
    body = {"username": username, "password": password}
    return client.post("/api/v1/auth/token", body, content_type="application/json", **extra)


def logged_in(response) -> bool:
    """A page login redirects; an API login answers with a token."""
    if response.status_code == 302:
        return True
    is_json = response.get("Content-Type", "").startswith("application/json")
    return response.status_code == 200 and is_json and "token" in response.json()


LOGINS = [page_login, admin_login, api_login]


def guess(login, times: int, username: str = "staff", **extra) -> list[int]:
    return [login(Client(), username, "wrong guess", **extra).status_code for _ in range(times)]


@pytest.mark.parametrize("login", LOGINS, ids=["page", "admin", "api"])
def test_past_the_limit_even_the_right_password_is_refused(staff, login):
    limit = settings.AXES_FAILURE_LIMIT
    assert 429 not in guess(login, limit - 1)
    assert guess(login, 1) == [429]
    refused = login(Client(), "staff", PASSWORD)
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) == settings.AXES_COOLOFF_TIME.total_seconds()


@pytest.mark.parametrize("login", LOGINS, ids=["page", "admin", "api"])
def test_another_account_from_the_same_address_is_not_locked(staff, login):
    User.objects.create_superuser("root", "root@example.com", PASSWORD)
    guess(login, settings.AXES_FAILURE_LIMIT)
    assert login(Client(), "staff", PASSWORD).status_code == 429
    assert logged_in(login(Client(), "root", PASSWORD))


@pytest.fixture
def case_user(db) -> User:
    """CaseUser1 signed up on the page (the handle is the login name), and may use the admin."""
    data = {"username": "CaseUser1", "password1": PASSWORD, "password2": PASSWORD}
    assert Client().post("/accounts/signup/", data).status_code == 302
    User.objects.filter(username="CaseUser1").update(is_staff=True, is_superuser=True)
    return User.objects.get(username="CaseUser1")


@pytest.mark.parametrize("login", LOGINS, ids=["page", "admin", "api"])
@pytest.mark.parametrize("typed", ["caseuser1", "CASEUSER1", "CaseUser1"])
def test_a_handle_logs_in_in_any_case(case_user, login, typed):
    assert logged_in(login(Client(), typed, PASSWORD))
    assert not logged_in(login(Client(), typed, "wrong guess"))


def test_a_handle_logs_in_in_any_case_whatever_its_login_name(db):
    """Judges register handles; staff may give one an account whose login name differs."""
    services.programmer_create(
        user=User.objects.create_user("dana-account", password=PASSWORD), handle="Dana"
    )
    assert logged_in(page_login(Client(), "DANA", PASSWORD))


@pytest.mark.parametrize("login", LOGINS, ids=["page", "admin", "api"])
def test_guesses_in_any_case_share_one_count(case_user, login):
    spellings = ["caseuser1", "CASEUSER1", "Caseuser1", "cAseuser1", "caSeuser1", "casEuser1"]
    for typed in spellings[: settings.AXES_FAILURE_LIMIT]:
        login(Client(), typed, "wrong guess")
    assert login(Client(), "CaseUser1", PASSWORD).status_code == 429


def test_a_locked_page_login_says_so_in_words(staff):
    guess(page_login, settings.AXES_FAILURE_LIMIT)
    response = page_login(Client(), "staff", PASSWORD)
    assert response.status_code == 429
    assert "Too many failed logins" in response.text
    assert f"{settings.AXES_COOLOFF_TIME.seconds // 60} minutes" in response.text


def test_the_paths_share_one_count(staff):
    """Guessing on the page and in the admin uses up the API's tries too."""
    limit = settings.AXES_FAILURE_LIMIT
    guess(page_login, limit // 2)
    guess(admin_login, limit - limit // 2)
    response = api_login(Client(), "staff", PASSWORD)
    assert (response.status_code, response.json()["error"]["code"]) == (429, "too_many_attempts")


def test_the_lock_lifts_after_the_cool_off(staff, now):
    guess(api_login, settings.AXES_FAILURE_LIMIT)
    now.shift(settings.AXES_COOLOFF_TIME)
    now.shift(1)
    assert api_login(Client(), "staff", PASSWORD).status_code == 200


# --- behind a proxy --------------------------------------------------------------------------


@pytest.fixture
def behind_proxy(settings):
    settings.TRUSTED_PROXY_HEADER = "X-Forwarded-For"
    settings.TRUSTED_PROXY_COUNT = 1


def via_proxy(client_address: str, forged: str = "") -> dict:
    """What the site sees of a request the proxy passed on: the proxy's own address, and the
    client's appended to whatever X-Forwarded-For the client sent."""
    forwarded = f"{forged}, {client_address}" if forged else client_address
    return {"REMOTE_ADDR": PROXY, "headers": {"X-Forwarded-For": forwarded}}


def test_behind_the_proxy_one_attacker_does_not_lock_the_owner_out(staff, behind_proxy):
    guess(api_login, settings.AXES_FAILURE_LIMIT, **via_proxy(ATTACKER))
    assert api_login(Client(), "staff", PASSWORD, **via_proxy(ATTACKER)).status_code == 429
    assert api_login(Client(), "staff", PASSWORD, **via_proxy(OWNER)).status_code == 200


def test_behind_the_proxy_a_forged_address_does_not_reset_the_count(staff, behind_proxy):
    for number in range(settings.AXES_FAILURE_LIMIT):
        api_login(Client(), "staff", "wrong", **via_proxy(ATTACKER, forged=f"192.0.2.{number}"))
    response = api_login(Client(), "staff", PASSWORD, **via_proxy(ATTACKER, forged="192.0.2.99"))
    assert response.status_code == 429


def test_without_a_configured_proxy_the_header_is_ignored(staff):
    for number in range(settings.AXES_FAILURE_LIMIT):
        headers = {"X-Forwarded-For": f"192.0.2.{number}"}
        api_login(Client(), "staff", "wrong", REMOTE_ADDR=ATTACKER, headers=headers)
    response = api_login(Client(), "staff", PASSWORD, REMOTE_ADDR=ATTACKER)
    assert response.status_code == 429


@pytest.mark.parametrize(
    ("forwarded", "count", "expected"),
    [
        ("203.0.113.7", 1, "203.0.113.7"),
        ("6.6.6.6, 203.0.113.7", 1, "203.0.113.7"),
        ("127.0.0.1, 10.0.0.9, 203.0.113.7", 1, "203.0.113.7"),  # forged entries, left-most
        ("6.6.6.6,203.0.113.7", 1, "203.0.113.7"),  # two header lines, joined by the server
        ("6.6.6.6, 203.0.113.7, 10.0.0.3", 2, "203.0.113.7"),
        ("203.0.113.7", 2, PROXY),  # fewer hops than proxies: the header is not trustworthy
        ("not an address", 1, PROXY),
        ("", 1, PROXY),
        ("2001:db8::1", 1, "2001:db8::1"),
    ],
)
def test_the_client_address_is_the_one_the_trusted_proxies_saw(
    settings, forwarded, count, expected
):
    settings.TRUSTED_PROXY_HEADER = "X-Forwarded-For"
    settings.TRUSTED_PROXY_COUNT = count
    request = RequestFactory().get("/", REMOTE_ADDR=PROXY, headers={"X-Forwarded-For": forwarded})
    assert client_ip(request) == expected


def test_the_readmes_proxy_replaces_the_header_the_site_reads_its_one_entry_from(settings):
    """The README's nginx sets X-Forwarded-For to the address it saw (`$remote_addr`) rather
    than appending to what the client sent, and says it is https: the site, set as the README
    says, takes the client's address from that one entry."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    nginx = readme.split("```nginx", 1)[1].split("```", 1)[0]
    assert "proxy_set_header X-Forwarded-For $remote_addr;" in nginx
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in nginx
    assert "$proxy_add_x_forwarded_for" not in nginx
    assert "proxy_buffering on;" in nginx
    assert "TRUSTED_PROXY_HEADER=X-Forwarded-For" in readme
    settings.TRUSTED_PROXY_HEADER = "X-Forwarded-For"
    settings.TRUSTED_PROXY_COUNT = 1
    request = RequestFactory().get("/", REMOTE_ADDR=PROXY, headers={"X-Forwarded-For": OWNER})
    assert client_ip(request) == OWNER


@pytest.mark.parametrize("count", ["0", "-1"])
def test_a_proxy_count_that_would_trust_the_clients_entry_stops_the_site(count):
    environment = {**os.environ, "DEBUG": "true", "TRUSTED_PROXY_COUNT": count}
    started = subprocess.run(
        [sys.executable, "-c", "import leaderboard_site.settings"],
        env=environment,
        capture_output=True,
        text=True,
    )
    assert started.returncode != 0
    assert "TRUSTED_PROXY_COUNT must be 1 or more" in started.stderr

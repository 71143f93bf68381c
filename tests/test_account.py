"""The account page, as a programmer uses it: an email address confirmed by a mailed link (the
only address alerts and password resets go to), a new password, a forgotten one reset by email
(throttled), a new country or organization (their rows move between the boards' group views),
and deleting the account (off the boards, the solves kept anonymously, the handle free).

Alice (BD, BUET) and Bob (IN) solve problems; Staff has no programmer."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client

from accounts import services as account_services
from activity.models import AlertPreferences
from activity.services.alerts import alerts_check
from solutions.models import Programmer
from tests.activity.conftest import alert_rule, solve_many
from tests.conftest import NOW, make_programmer
from tests.support.pages import ranks, signed_in, solve

PASSWORD = "correct horse battery"
NEW_PASSWORD = "a brand new passphrase"
LINK = re.compile(r"http://testserver(/\S+)")


@pytest.fixture(autouse=True)
def site_url(settings):
    settings.SITE_URL = "http://testserver"


def link_in(message) -> str:
    """The path of the one link in an email."""
    [path] = LINK.findall(message.body)
    return path


def ask_for_email(client: Client, email: str, password: str = PASSWORD):
    return client.post("/account/email/", {"email": email, "current_password": password})


def confirmed(programmer: Programmer, email: str) -> None:
    """Alice adds an address and follows the link mailed to it."""
    client = signed_in(programmer)
    assert ask_for_email(client, email).status_code == 302
    [to_confirm] = [message for message in mail.outbox if message.to == [email]]
    assert client.post(link_in(to_confirm)).status_code == 302


def reset(client: Client, email: str) -> int:
    """Ask for a password reset email; the status of the answer."""
    return client.post("/accounts/password_reset/", {"email": email}).status_code


def field_errors(response, field: str) -> str:
    """The errors shown under one field of a form."""
    found = re.search(rf'<ul class="errors" id="id_{field}_error">(.*?)</ul>', response.text)
    return found.group(1) if found else ""


# --- the page --------------------------------------------------------------------------------


def test_the_header_links_to_the_account_page_when_signed_in(mongodb, alice):
    assert 'href="/account/"' in signed_in(alice).get("/leaderboard/").text
    assert 'href="/account/"' not in Client().get("/leaderboard/").text
    assert Client().get("/account/")["Location"] == "/accounts/login/?next=/account/"
    page = signed_in(alice).get("/account/")
    assert page.status_code == 200
    for section in ("Email", "Country and organization", "Password", "Delete your account"):
        assert f"<h2>{section}</h2>" in page.text
    assert "No confirmed address yet" in page.text


def test_an_account_without_a_programmer_changes_its_password_only(mongodb, staff):
    client = Client()
    client.force_login(staff)
    page = client.get("/account/").text
    assert "staff set its address in the admin" in page
    assert "Country and organization" not in page
    assert client.post("/account/email/", {"email": "x@example.com"}).status_code == 404


# --- email -----------------------------------------------------------------------------------


def test_the_address_is_used_only_once_the_mailed_link_is_followed(mongodb, now, alice):
    client = signed_in(alice)
    response = ask_for_email(client, "alice@example.com")
    assert response["Location"] == "/account/"
    [message] = mail.outbox
    assert message.to == ["alice@example.com"]
    assert message.subject == "Confirm your email address"
    page = client.get("/account/").text
    assert "Waiting for confirmation: <strong>alice@example.com</strong>" in page
    assert User.objects.get(pk=alice.user.pk).email == ""

    # Opening the link changes nothing by itself (mail scanners open links): its button does.
    link = link_in(message)
    opened = Client().get(link)
    assert opened.status_code == 200 and "Confirm alice@example.com" in opened.text
    assert User.objects.get(pk=alice.user.pk).email == ""
    assert client.post(link)["Location"] == "/account/"
    assert User.objects.get(pk=alice.user.pk).email == "alice@example.com"
    page = client.get("/account/").text
    assert "Alerts and password resets go to <strong>alice@example.com</strong>" in page
    assert "Waiting for confirmation" not in page
    # A link works once.
    assert client.post(link).status_code == 400


def test_a_tampered_link_is_refused(mongodb, now, alice):
    client = signed_in(alice)
    ask_for_email(client, "alice@example.com")
    link = link_in(mail.outbox[0])
    token = link.split("/")[-2]
    other = account_services.email_link_token(user=alice.user, email="mallory@example.com")
    forged = other.split(":")[0] + ":" + ":".join(token.split(":")[1:])
    for bad in (link.replace(token, token[:-2] + "xx"), link.replace(token, forged)):
        response = client.post(bad)
        assert response.status_code == 400
        assert "This link is not valid" in response.text
        assert 'class="site-header"' in response.text
    assert User.objects.get(pk=alice.user.pk).email == ""


def test_an_expired_link_is_refused(mongodb, now, alice):
    client = signed_in(alice)
    ask_for_email(client, "alice@example.com")
    link = link_in(mail.outbox[0])
    now.shift(dt.timedelta(days=3, minutes=1))
    response = client.post(link)
    assert response.status_code == 400
    assert "This link has expired" in response.text
    assert User.objects.get(pk=alice.user.pk).email == ""


def test_asking_for_another_address_makes_the_older_link_stale(mongodb, now, alice):
    client = signed_in(alice)
    ask_for_email(client, "old@example.com")
    ask_for_email(client, "new@example.com")
    old_link, new_link = (link_in(message) for message in mail.outbox)
    response = client.post(old_link)
    assert response.status_code == 400 and "no longer in use" in response.text
    client.post(new_link)
    assert User.objects.get(pk=alice.user.pk).email == "new@example.com"


def test_confirmation_emails_are_throttled_per_account(mongodb, now, alice):
    client = signed_in(alice)
    for i in range(account_services.CONFIRMATIONS_PER_HOUR):
        assert ask_for_email(client, f"a{i}@example.com").status_code == 302
    refused = ask_for_email(client, "one-more@example.com")
    assert refused.status_code == 429
    assert "Too many confirmation emails" in field_errors(refused, "email")
    assert len(mail.outbox) == account_services.CONFIRMATIONS_PER_HOUR
    now.shift(dt.timedelta(hours=1))
    assert ask_for_email(client, "one-more@example.com").status_code == 302


def test_changing_the_address_takes_the_password_and_a_wrong_one_changes_nothing(
    mongodb, now, alice
):
    """A stolen session alone cannot point the password resets at another mailbox."""
    confirmed(alice, "alice@example.com")
    mail.outbox.clear()
    client = signed_in(alice)
    without = client.post("/account/email/", {"email": "mallory@example.com"})
    assert without.status_code == 400
    assert "This field is required." in field_errors(without, "current_password")
    wrong = ask_for_email(client, "mallory@example.com", password="a guess")
    assert wrong.status_code == 400
    assert "That is not your password." in field_errors(wrong, "current_password")
    assert mail.outbox == []
    assert Programmer.objects.get(pk=alice.pk).email_pending == ""
    assert 'autocomplete="current-password"' in client.get("/account/").text


def test_the_confirmed_address_is_told_of_a_new_address_asked_for_and_confirmed(
    mongodb, now, alice
):
    confirmed(alice, "alice@example.com")
    assert [message.to for message in mail.outbox] == [["alice@example.com"]]  # nobody to tell
    mail.outbox.clear()
    client = signed_in(alice)
    assert ask_for_email(client, "new@example.com").status_code == 302
    warning, to_confirm = sorted(
        mail.outbox, key=lambda message: message.to != ["alice@example.com"]
    )
    assert warning.to == ["alice@example.com"]
    assert warning.subject == "Your leaderboard address is about to change"
    assert "new@example.com" in warning.body and "change your" in warning.body
    assert "http://testserver/account/" in warning.body
    assert to_confirm.to == ["new@example.com"]
    mail.outbox.clear()
    assert client.post(link_in(to_confirm)).status_code == 302
    [changed] = mail.outbox
    assert changed.to == ["alice@example.com"]
    assert changed.subject == "Your leaderboard address changed"
    assert "now uses new@example.com" in changed.body


def test_removing_the_address_stops_the_emails(mongodb, now, alice):
    confirmed(alice, "alice@example.com")
    client = signed_in(alice)
    assert client.post("/account/email/remove/")["Location"] == "/account/"
    assert User.objects.get(pk=alice.user.pk).email == ""


@pytest.mark.parametrize("follows_the_link", [False, True], ids=["pending", "confirmed"])
def test_rank_drop_alerts_email_only_a_confirmed_address(
    mongodb, now, boards, problems, alice, follows_the_link
):
    board = boards["last-7-days"]
    rivals = [make_programmer(handle) for handle in ("dave", "erin", "frank", "grace")]
    alert_rule(board, places=3, minutes=60)
    solve_many(alice, problems[:2])
    for rival in rivals:
        solve_many(rival, problems[:1])
    AlertPreferences.objects.create(user=alice.user, my_rank_drops=True)
    client = signed_in(alice)
    ask_for_email(client, "alice@example.com")
    if follows_the_link:
        client.post(link_in(mail.outbox[0]))
    mail.outbox.clear()
    alerts_check(board=board)  # Alice is #1
    now.shift(dt.timedelta(minutes=30))
    for rival in rivals[:3]:
        solve_many(rival, problems[1:3])
    report = alerts_check(board=board)  # Alice is #4
    assert report.notified == 1
    if follows_the_link:
        assert [message.to for message in mail.outbox] == [["alice@example.com"]]
    else:
        assert (report.emailed, mail.outbox) == (0, [])


def test_the_alert_settings_page_sends_to_the_account_page_for_an_address(mongodb, alice):
    page = signed_in(alice).get("/account/alerts/").text
    assert "no confirmed email address" in page
    assert 'href="/account/#email"' in page


# --- forms: errors per field, CSRF -----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "data", "field", "error"),
    [
        ("/account/email/", {"email": "not an address"}, "email", "Enter a valid email address."),
        ("/account/email/", {"email": ""}, "email", "This field is required."),
        ("/account/groups/", {"country": "XX"}, "country", "Select a valid choice."),
        ("/account/groups/", {"organization": "o" * 101}, "organization", "at most 100"),
        ("/account/delete/", {"password": "wrong guess"}, "password", "not your password"),
        (
            "/accounts/password_change/",
            {"old_password": "wrong", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
            "old_password",
            "Your old password was entered incorrectly.",
        ),
        (
            "/accounts/password_change/",
            {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": "other"},
            "new_password2",
            "The two password fields didn’t match.",
        ),
        ("/accounts/password_reset/", {"email": "nope"}, "email", "Enter a valid email address."),
    ],
)
def test_a_refused_form_says_what_is_wrong_beside_the_field(
    mongodb, now, alice, path, data, field, error
):
    response = signed_in(alice).post(path, data)
    assert response.status_code == 400
    assert error in field_errors(response, field)
    assert 'class="site-header"' in response.text  # the site's look, not the admin's


def test_an_address_already_confirmed_is_refused(mongodb, now, alice):
    confirmed(alice, "alice@example.com")
    response = ask_for_email(signed_in(alice), "Alice@Example.com")
    assert response.status_code == 400
    assert "That is already your address." in field_errors(response, "email")


@pytest.mark.parametrize(
    "path",
    [
        "/account/email/",
        "/account/email/remove/",
        "/account/groups/",
        "/account/delete/",
        "/accounts/password_change/",
        "/accounts/password_reset/",
    ],
)
def test_every_account_form_refuses_a_post_without_its_csrf_token(mongodb, alice, path):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice.user)
    response = client.post(path, {"email": "a@example.com", "password": PASSWORD})
    assert response.status_code == 403
    assert Programmer.objects.get(pk=alice.pk).handle == "Alice"
    assert mail.outbox == []


def test_a_confirmation_link_refuses_a_post_without_its_csrf_token(mongodb, now, alice):
    ask_for_email(signed_in(alice), "alice@example.com")
    client = Client(enforce_csrf_checks=True)
    assert client.post(link_in(mail.outbox[0])).status_code == 403
    assert User.objects.get(pk=alice.user.pk).email == ""


# --- passwords -------------------------------------------------------------------------------


def test_a_programmer_changes_their_password_and_stays_signed_in(mongodb, alice):
    client = signed_in(alice)
    data = {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    response = client.post("/accounts/password_change/", data, follow=True)
    assert response.redirect_chain[-1][0] == "/accounts/password_change/done/"
    assert "Password changed" in response.text and 'class="site-header"' in response.text
    assert client.get("/account/").status_code == 200  # still signed in
    assert Client().login(username="alice", password=NEW_PASSWORD)
    assert not Client().login(username="alice", password=PASSWORD)


def test_the_login_page_offers_to_reset_a_forgotten_password(mongodb):
    page = Client().get("/accounts/login/").text
    assert '<a href="/accounts/password_reset/">Forgot password?</a>' in page
    reset = Client().get("/accounts/password_reset/")
    assert reset.status_code == 200
    assert 'class="site-header"' in reset.text and "Django administration" not in reset.text


def test_a_forgotten_password_is_reset_through_the_emailed_link(mongodb, now, alice):
    confirmed(alice, "alice@example.com")
    mail.outbox.clear()
    client = Client()
    response = client.post("/accounts/password_reset/", {"email": "ALICE@example.com"})
    assert response["Location"] == "/accounts/password_reset/done/"
    [message] = mail.outbox
    assert message.to == ["alice@example.com"]
    assert message.subject == "Reset your leaderboard password"
    form = client.get(link_in(message), follow=True)
    assert "Set a new password" in form.text and 'class="site-header"' in form.text
    set_password = form.redirect_chain[-1][0]
    data = {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    done = client.post(set_password, data, follow=True)
    assert "Password set" in done.text and 'class="site-header"' in done.text
    assert Client().login(username="alice", password=NEW_PASSWORD)
    # The link works once.
    assert "has been used already" in Client().get(link_in(message), follow=True).text


def test_a_pending_address_gets_no_reset_email(mongodb, now, alice):
    ask_for_email(signed_in(alice), "alice@example.com")
    mail.outbox.clear()
    response = Client().post("/accounts/password_reset/", {"email": "alice@example.com"})
    assert response.status_code == 302  # the same answer: nobody learns which addresses exist
    assert mail.outbox == []


def test_reset_emails_are_throttled_per_email_address(mongodb, now, alice):
    confirmed(alice, "alice@example.com")
    mail.outbox.clear()
    for i in range(account_services.RESETS_PER_EMAIL_PER_HOUR):  # from several addresses
        assert reset(Client(REMOTE_ADDR=f"198.51.100.{i}"), "alice@example.com") == 302
    refused = Client().post("/accounts/password_reset/", {"email": "Alice@example.com"})
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 3600
    assert "Too many password reset emails" in refused.text
    assert 'class="site-header"' in refused.text
    assert len(mail.outbox) == account_services.RESETS_PER_EMAIL_PER_HOUR
    now.shift(dt.timedelta(hours=1))
    assert reset(Client(), "alice@example.com") == 302


def test_reset_requests_are_throttled_per_client_address(mongodb, now):
    client = Client(REMOTE_ADDR="203.0.113.7")
    for i in range(account_services.RESETS_PER_CLIENT_PER_HOUR):
        assert reset(client, f"u{i}@example.com") == 302
    assert reset(client, "x@example.com") == 429
    assert reset(Client(REMOTE_ADDR="198.51.100.9"), "x@example.com") == 302


# --- country and organization ----------------------------------------------------------------


def test_a_new_country_and_organization_move_the_rows_between_the_group_views(
    mongodb, now, boards, problems, alice, bob
):
    for problem in problems[:3]:
        solve(bob, problem, NOW - dt.timedelta(hours=1))
    solve(alice, problems[0])
    assert ranks(Client().get("/leaderboard/?country=BD")) == [(1, "Alice", 1)]
    response = signed_in(alice).post("/account/groups/", {"country": "IN", "organization": "MIT"})
    assert response["Location"] == "/account/"
    now.shift(dt.timedelta(seconds=2))  # a visitor's page follows the board within a second
    for board in ("", "last-30-days/"):
        assert ranks(Client().get(f"/leaderboard/{board}?country=BD")) == []
        assert ranks(Client().get(f"/leaderboard/{board}?org=BUET")) == []
        in_india = Client().get(f"/leaderboard/{board}?country=IN")
        assert ranks(in_india) == [(1, "bob", 3), (2, "Alice", 1)]
        assert ranks(Client().get(f"/leaderboard/{board}?org=MIT")) == [(1, "Alice", 1)]
    assert ranks(Client().get("/leaderboard/")) == [(1, "bob", 3), (2, "Alice", 1)]
    page = signed_in(alice).get("/account/").text
    assert '<option value="IN" selected>' in page and 'value="MIT"' in page


def test_leaving_every_group_takes_the_rows_out_of_the_group_views(
    mongodb, now, boards, problems, alice
):
    solve(alice, problems[0])
    signed_in(alice).post("/account/groups/", {"country": "", "organization": ""})
    assert ranks(Client().get("/leaderboard/?country=BD")) == []
    assert ranks(Client().get("/leaderboard/?org=BUET")) == []
    assert ranks(Client().get("/leaderboard/")) == [(1, "Alice", 1)]


# --- deleting --------------------------------------------------------------------------------


def test_a_deleted_account_leaves_the_boards_keeps_its_solves_and_frees_the_handle(
    mongodb, now, boards, problems, alice, bob
):
    for problem in problems[:3]:
        solve(alice, problem)
    solve(bob, problems[0])
    assert ranks(Client().get("/leaderboard/")) == [(1, "Alice", 3), (2, "bob", 1)]
    solves_before = mongodb["solves"].count_documents({})

    client = signed_in(alice)
    response = client.post("/account/delete/", {"password": PASSWORD}, follow=True)
    assert "Your account is deleted" in response.text
    assert client.get("/account/")["Location"].startswith("/accounts/login/")  # signed out

    now.shift(dt.timedelta(seconds=2))  # a visitor's page follows the board within a second
    assert ranks(Client().get("/leaderboard/")) == [(1, "bob", 1)]
    assert ranks(Client().get("/leaderboard/?country=BD")) == []
    assert mongodb["solves"].count_documents({}) == solves_before
    assert mongodb["solves"].count_documents({"programmer_id": alice.pk}) == 3
    anonymous = Programmer.objects.get(pk=alice.pk)
    assert (anonymous.handle, anonymous.user, anonymous.hidden) == (
        f"deleted-{alice.pk}",
        None,
        True,
    )
    assert (str(anonymous.country), anonymous.organization) == ("", "")
    assert not User.objects.filter(username="alice").exists()
    assert not Client().login(username="alice", password=PASSWORD)

    # The handle is free again: a newcomer signs up with it.
    signup = Client().post(
        "/accounts/signup/",
        {"username": "Alice", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )
    assert signup.status_code == 302
    assert Programmer.objects.get(handle="Alice").pk != alice.pk


def test_a_deleted_account_keeps_a_unique_anonymous_handle(mongodb, now, boards, alice):
    squatter = make_programmer(f"deleted-{alice.pk}")
    account_services.account_delete(user=alice.user)
    handle = Programmer.objects.get(pk=alice.pk).handle
    assert handle.startswith(f"deleted-{alice.pk}-") and handle != squatter.handle


def test_deleting_with_the_wrong_password_keeps_the_account(mongodb, now, boards, alice):
    response = signed_in(alice).post("/account/delete/", {"password": "wrong guess"})
    assert response.status_code == 400
    assert Programmer.objects.get(pk=alice.pk).handle == "Alice"
    assert User.objects.filter(username="alice").exists()


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/account/delete/", "password"),
        ("/accounts/password_change/", "old_password"),
        ("/account/email/", "current_password"),
    ],
)
def test_guessing_the_password_on_the_account_page_is_throttled_like_logins(
    mongodb, now, boards, alice, settings, path, field
):
    client = signed_in(alice)
    data = {
        field: "wrong guess",
        "new_password1": NEW_PASSWORD,
        "new_password2": NEW_PASSWORD,
        "email": "mallory@example.com",
    }
    statuses = [client.post(path, data).status_code for _ in range(settings.AXES_FAILURE_LIMIT)]
    assert statuses[:-1] == [400] * (settings.AXES_FAILURE_LIMIT - 1)
    assert client.post(path, {**data, field: PASSWORD}).status_code == 429
    assert Programmer.objects.get(pk=alice.pk).handle == "Alice"
    assert Programmer.objects.get(pk=alice.pk).email_pending == ""
    assert not Client().login(username="alice", password=NEW_PASSWORD)


def test_the_account_page_opens_at_the_top_and_a_refused_password_takes_the_focus(mongodb, alice):
    page = signed_in(alice).get("/account/")
    assert page.status_code == 200 and "autofocus" not in page.text
    refused = signed_in(alice).post(
        "/accounts/password_change/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": "other"},
    )
    assert refused.status_code == 400
    focused = re.findall(r"<input [^>]*autofocus[^>]*>", refused.text)
    assert len(focused) == 1 and 'name="new_password2"' in focused[0]

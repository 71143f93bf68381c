"""Bad input on the pages gets a clear message with a 4xx, never a 500 and never a partial
write: empty and huge answers, unknown problems, odd handles, bad dates, pages and groups, and
answers posted without a CSRF token."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from solutions import mongo
from solutions.forms import users_logging_in_as
from solutions.models import Board, Problem, Programmer


def signed_in(programmer_or_user) -> Client:
    client = Client()
    client.force_login(getattr(programmer_or_user, "user", programmer_or_user))
    return client


def nothing_recorded() -> bool:
    return mongo.submissions().count_documents({}) == 0 and mongo.solves().count_documents({}) == 0


# --- answers -----------------------------------------------------------------------------------


def test_an_empty_answer_is_a_form_error(mongodb, now, problems, alice):
    response = signed_in(alice).post("/problems/p1/", {"answer": ""})
    assert response.status_code == 400
    assert "This field is required." in response.text
    assert nothing_recorded()


def test_an_answer_of_only_spaces_is_a_form_error(mongodb, now, problems, alice):
    response = signed_in(alice).post("/problems/p1/", {"answer": "   "})
    assert response.status_code == 400
    assert "Enter an answer." in response.text
    assert nothing_recorded()


def test_an_answer_over_a_thousand_characters_is_a_form_error(mongodb, now, problems, alice):
    response = signed_in(alice).post("/problems/p1/", {"answer": "7" * 5000})
    assert response.status_code == 400
    assert "at most 1000 characters (it has 5000)" in response.text
    assert nothing_recorded()


def test_a_body_bigger_than_the_upload_limit_is_a_bad_request(mongodb, now, problems, alice):
    response = signed_in(alice).post("/problems/p1/", {"answer": "x" * 300 * 1024})
    assert response.status_code == 400
    assert nothing_recorded()


def test_an_unknown_or_unpublished_problem_is_not_found(mongodb, problems, alice):
    Problem.objects.create(slug="draft", title="Draft", answer="1", published=False)
    client = signed_in(alice)
    for slug in ["nope", "draft"]:
        assert client.get(f"/problems/{slug}/").status_code == 404
        assert client.post(f"/problems/{slug}/", {"answer": "1"}).status_code == 404
    assert "Not found" in client.get("/problems/nope/").text
    assert nothing_recorded()


def test_a_visitor_posting_an_answer_is_sent_to_log_in(mongodb, problems):
    response = Client().post("/problems/p1/", {"answer": "7"})
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/problems/p1/"
    assert nothing_recorded()


def test_a_banned_programmer_cannot_submit(mongodb, now, problems, alice):
    Programmer.objects.filter(pk=alice.pk).update(banned=True)
    response = signed_in(alice).post("/problems/p1/", {"answer": "7"})
    assert response.status_code == 400
    assert "banned from submitting" in response.text
    assert nothing_recorded()


def test_an_account_without_a_handle_cannot_submit(mongodb, now, problems, staff):
    response = signed_in(staff).post("/problems/p1/", {"answer": "7"})
    assert response.status_code == 400
    assert "no programmer handle" in response.text
    assert nothing_recorded()


def test_the_answer_form_enforces_csrf(mongodb, now, problems, alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice.user)
    assert client.post("/problems/p1/", {"answer": "7"}).status_code == 403
    assert nothing_recorded()

    client.get("/problems/p1/")
    token = client.cookies["csrftoken"].value
    response = client.post("/problems/p1/", {"answer": "7", "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert mongo.solves().count_documents({"programmer_id": alice.pk}) == 1


# --- sign-up -----------------------------------------------------------------------------------


def sign_up(handle: str, **extra):
    """The handle is also the login name: the form has one field for both."""
    return Client().post(
        "/accounts/signup/",
        {
            "username": handle,
            "password1": "a long and unusual passphrase",
            "password2": "a long and unusual passphrase",
            **extra,
        },
    )


@pytest.mark.parametrize(
    "handle",
    ["has space", "dot.ted", "$gt", "dollar$", "semi;colon", "ünïcode", "x" * 33, "<b>", ""],
)
def test_a_handle_with_odd_characters_is_a_form_error(db, handle):
    response = sign_up(handle)
    assert response.status_code == 400
    assert response.context["form"].errors["username"]
    assert not User.objects.exists()
    assert not Programmer.objects.exists()


def test_a_handle_taken_in_another_case_is_a_form_error(db, alice):
    response = sign_up("ALICE")
    assert response.status_code == 400
    assert "That handle is taken." in response.text
    # The account is made together with the handle, or not at all.
    assert not User.objects.filter(username="ALICE").exists()


def test_a_handle_a_judge_registered_is_taken_too(db):
    Programmer.objects.create(handle="judged")
    response = sign_up("Judged")
    assert "That handle is taken." in response.text
    assert not User.objects.exists()


def test_a_staff_login_name_is_taken_in_any_case_through_its_index(db):
    # Staff made with createsuperuser have a login and no handle on the boards.
    User.objects.create_user("Staffer", password="x" * 12)
    response = sign_up("sTAFFER")
    assert "That handle is taken." in response.text
    assert not Programmer.objects.exists()
    plan = users_logging_in_as("staffer").explain()
    assert "USING INDEX auth_user_username_ci" in plan, plan


@pytest.mark.parametrize("country", ["B", "BDX", "1D", "$a", "Bangladesh", "XX"])
def test_a_country_that_is_not_in_the_list_is_a_form_error(db, country):
    response = sign_up("newbie", country=country)
    assert response.status_code == 400
    assert "Select a valid choice" in response.text
    assert not User.objects.exists()


def test_every_field_shows_its_own_error(db):
    response = Client().post(
        "/accounts/signup/",
        {
            "username": "a b",
            "password1": "one long phrase",
            "password2": "another",
            "country": "Bangladesh",
            "organization": "o" * 101,
        },
    )
    assert response.status_code == 400
    fields = {"username", "password2", "country", "organization"}
    assert set(response.context["form"].errors) == fields
    for field in fields:
        assert f'id="id_{field}_error"' in response.text


def test_mismatched_passwords_are_a_form_error(db):
    response = Client().post(
        "/accounts/signup/",
        {"username": "x", "password1": "one long phrase", "password2": "another"},
    )
    assert response.status_code == 400
    assert response.context["form"].errors["password2"]
    assert not User.objects.exists()


# --- board queries -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("date=2020-13-45", "Enter the date as YYYY-MM-DD."),
        ("date=yesterday", "Enter the date as YYYY-MM-DD."),
        ("date=2020-01-20", "That day has not happened yet"),
        ("date=2019-01-01", "The board of that day is no longer kept."),
        ("page=abc", "Enter a whole number."),
        ("page=0", "greater than or equal to 1"),
        ("page=-3", "greater than or equal to 1"),
        ("page=99999999999999999999", "less than or equal to"),
        ("country=B", "two-letter country code"),
        ("country=1D", "two-letter country code"),
        ("country=BD&org=BUET", "Filter by country or by organization, not both."),
        ("org=" + "o" * 101, "at most 100 characters"),
        ("q=a.b", "Use 1 to 32 letters"),
        ("q=%24gt", "Use 1 to 32 letters"),
    ],
)
def test_a_bad_board_query_gets_a_clear_message(mongodb, now, boards, query, message):
    response = Client().get(f"/leaderboard/?{query}")
    assert response.status_code == 400
    assert message in response.text
    assert "Show today's board" in response.text


def test_the_all_time_board_refuses_a_date(mongodb, now, boards):
    response = Client().get("/leaderboard/all-time/?date=2020-01-18")
    assert response.status_code == 400
    assert "keeps current totals only" in response.text


def test_a_page_past_the_end_says_how_many_pages_there_are(mongodb, now, boards):
    response = Client().get("/leaderboard/?page=7")
    assert response.status_code == 404
    assert "There is no page 7: this board has 1 page." in response.text


def test_an_unknown_or_hidden_board_is_not_found(mongodb, boards):
    Board.objects.filter(slug="last-30-days").update(visible=False)
    assert Client().get("/leaderboard/nope/").status_code == 404
    assert Client().get("/leaderboard/last-30-days/").status_code == 404


@pytest.mark.parametrize("handle", ["nobody", "a.b", "$gt", "%20"])
def test_an_odd_or_unknown_profile_handle_is_not_found(mongodb, handle):
    assert Client().get(f"/u/{handle}/").status_code == 404

"""The forms take any text a browser (or anything pretending to be one) can send: arbitrary
unicode, control characters and lone surrogates (sent as the UTF-8-style bytes a lax encoder
makes of them). Each answer is a form error (400) or a success (a redirect), never a 500.

Alice (BD, BUET) answers problems; the sign-up form is used anonymously.
"""

from __future__ import annotations

import datetime as dt
from urllib.parse import quote

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from competitions import services as competition_services
from solutions.models import Programmer

# Any code point: letters, controls (NUL included), private use, and lone surrogates, which
# Hypothesis leaves out of its default characters.
ANY_CHARACTER = st.one_of(
    st.characters(exclude_categories=()),
    st.integers(0, 0x1F).map(chr),
    st.integers(0xD800, 0xDFFF).map(chr),
)
ANY_TEXT = st.text(ANY_CHARACTER, max_size=80)
HANDLE = st.from_regex(r"\A[A-Za-z0-9_-]{1,32}\Z")
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def form_body(fields: dict[str, str]) -> str:
    """An urlencoded body; lone surrogates go as the bytes "surrogatepass" makes of them (not
    valid UTF-8, as a broken client would send them)."""
    return "&".join(
        f"{quote(name)}={quote(value.encode('utf-8', 'surrogatepass'), safe='')}"
        for name, value in fields.items()
    )


def post_form(client: Client, path: str, fields: dict[str, str]):
    return client.generic(
        "POST", path, form_body(fields), content_type="application/x-www-form-urlencoded"
    )


def test_a_lone_surrogate_in_a_handle_is_a_form_error(db):
    response = post_form(
        Client(),
        "/accounts/signup/",
        {"username": "ab\udc80", "password1": "a long phrase", "password2": "a long phrase"},
    )
    assert response.status_code == 400
    assert response.context["form"].errors["username"]


@FUZZ
@given(
    username=st.one_of(HANDLE, ANY_TEXT),
    password=ANY_TEXT,
    confirmation=st.one_of(st.just(None), ANY_TEXT),
    country=st.one_of(st.sampled_from(["", "BD", "NP", "bd"]), ANY_TEXT),
    organization=ANY_TEXT,
)
def test_sign_up_answers_any_text_with_a_form_error_or_a_new_account(
    db, username, password, confirmation, country, organization
):
    fields = {
        "username": username,
        "password1": password,
        "password2": password if confirmation is None else confirmation,
        "country": country,
        "organization": organization,
    }
    response = post_form(Client(), "/accounts/signup/", fields)
    assert response.status_code in (302, 400), response.status_code
    if response.status_code == 302:
        programmer = Programmer.objects.get(handle=username)
        assert str(programmer.country) in {"", "BD", "NP"}
    else:
        assert response.context["form"].errors


@pytest.fixture
def answering(mongodb, problems, alice, settings):
    settings.ANSWER_WRONG_PER_MINUTE = 10**6  # hundreds of guesses: not what this test is about
    client = Client()
    client.force_login(alice.user)
    competition_services.competition_create(
        slug="fuzz-cup",
        title="Fuzz Cup",
        start=dt.datetime.now(dt.UTC) - dt.timedelta(hours=1),
        end=dt.datetime.now(dt.UTC) + dt.timedelta(hours=1),
        problems=problems[:1],
    )
    return client


@FUZZ
@given(answer=ANY_TEXT)
def test_the_answer_forms_answer_any_text_with_a_form_error_or_a_verdict(answering, answer):
    on_problem = post_form(answering, "/problems/p1/", {"answer": answer})
    assert on_problem.status_code in (302, 400), on_problem.status_code
    in_competition = post_form(
        answering, "/competitions/fuzz-cup/problems/A/submit/", {"A-answer": answer}
    )
    assert in_competition.status_code in (302, 400), in_competition.status_code

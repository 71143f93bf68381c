"""`manage.py create_competition`: staff create a competition from the shell."""

from __future__ import annotations

import datetime as dt
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from competitions.models import Competition

ARGS = {
    "slug": "winter-cup",
    "title": "Winter Cup",
    "start": "2020-01-19T09:00:00+06:00",
    "end": "2020-01-19T14:00:00+06:00",
    "problems": "p3,p1,p2",
}


def create(**changes) -> str:
    options = {**ARGS, **changes}
    argv = []
    for name, value in options.items():
        if value is True:
            argv.append(f"--{name}")
        elif value is not None:
            argv += [f"--{name}", value]
    out = StringIO()
    call_command("create_competition", *argv, stdout=out)
    return out.getvalue()


def test_it_creates_a_competition_with_its_problems_lettered_in_order(problems):
    output = create(freeze="2020-01-19T13:00:00+06:00", **{"registration-required": True})
    assert "Created winter-cup" in output
    competition = Competition.objects.get(slug="winter-cup")
    assert competition.start == dt.datetime(2020, 1, 19, 3, 0, tzinfo=dt.UTC)
    assert competition.freeze_at == dt.datetime(2020, 1, 19, 7, 0, tzinfo=dt.UTC)
    assert competition.registration_required
    assert [(link.letter, link.problem.slug) for link in competition.links.all()] == [
        ("A", "p3"),
        ("B", "p1"),
        ("C", "p2"),
    ]


def test_a_dry_run_checks_everything_and_saves_nothing(problems):
    assert "Would create winter-cup" in create(**{"dry-run": True})
    assert not Competition.objects.exists()


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"problems": "p1,nope,p2,zilch"}, "Unknown problems: nope, zilch."),
        ({"problems": " , "}, "at least one problem"),
        ({"problems": "p1,p1"}, "only once"),
        ({"start": "tomorrow"}, "--start: 'tomorrow' is not an ISO 8601"),
        ({"end": "2020-01-19T14:00:00"}, "--end: '2020-01-19T14:00:00' needs a UTC offset"),
        ({"end": "2020-01-19T08:00:00+06:00"}, "end: The end must be after the start."),
        ({"freeze": "2020-01-19T15:00:00+06:00"}, "freeze_at: The freeze time must be between"),
        ({"slug": "not a slug"}, "slug:"),
    ],
)
def test_bad_input_is_a_clear_error_and_saves_nothing(problems, changes, message):
    with pytest.raises(CommandError, match=message.replace(".", r"\.").replace("(", r"\(")):
        create(**changes)
    assert not Competition.objects.exists()


def test_a_taken_slug_is_refused(problems):
    create()
    with pytest.raises(CommandError, match="slug: Competition with this Slug already exists"):
        create(title="Another")

"""Forms: they check what a browser sends; the services decide what it means."""

from __future__ import annotations

import datetime as dt

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.core.validators import RegexValidator

from . import leaderboard, selectors, services
from .models import Board, Programmer, handle_validator

MAX_ANSWER_LENGTH = 1000
country_validator = RegexValidator(r"^[A-Za-z]{2}$", "Use a two-letter country code, e.g. BD.")


class SignupForm(UserCreationForm):
    """A user account plus the programmer's public handle and groups."""

    handle = forms.CharField(
        max_length=32,
        validators=[handle_validator],
        help_text="Shown on the boards: letters, digits, _ and -.",
    )
    country = forms.CharField(
        max_length=2,
        required=False,
        validators=[country_validator],
        help_text="Optional two-letter code, e.g. BD.",
    )
    organization = forms.CharField(
        max_length=100, required=False, help_text="Optional: university or company."
    )

    def programmer_fields(self) -> dict[str, str]:
        return {name: self.cleaned_data[name] for name in ("handle", "country", "organization")}


class AnswerForm(forms.Form):
    # Not stripped: a problem may compare answers exactly as written.
    answer = forms.CharField(
        max_length=MAX_ANSWER_LENGTH,
        strip=False,
        widget=forms.TextInput(attrs={"autocomplete": "off", "autofocus": True}),
    )

    def __init__(self, *args, programmer: Programmer | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.programmer = programmer

    def clean_answer(self) -> str:
        answer = self.cleaned_data["answer"]
        if not answer.strip():
            raise forms.ValidationError("Enter an answer.", code="required")
        return answer

    def clean(self) -> dict:
        if self.programmer is None:
            raise forms.ValidationError(
                "Your account has no programmer handle, so it cannot answer problems."
            )
        if self.programmer.banned:
            raise forms.ValidationError("Your account is banned from submitting answers.")
        return super().clean()


class BoardQueryForm(forms.Form):
    """The query string of a board page: which day, page, group and programmer to show."""

    date = forms.DateField(required=False, input_formats=["%Y-%m-%d"])
    page = forms.IntegerField(required=False, min_value=1, max_value=1_000_000)
    q = forms.CharField(required=False, max_length=32, validators=[handle_validator])
    country = forms.CharField(required=False, max_length=2, validators=[country_validator])
    org = forms.CharField(required=False, max_length=100)
    find = forms.CharField(required=False, max_length=10)

    def __init__(self, *args, board: Board, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.board = board
        self.fields["date"].error_messages["invalid"] = "Enter the date as YYYY-MM-DD."

    def clean_date(self) -> dt.date | None:
        date = self.cleaned_data["date"]
        if date is None:
            return None
        if self.board.spec.is_all_time:
            raise forms.ValidationError(
                "The all-time board keeps current totals only; it has no past days."
            )
        day = leaderboard.date_to_day(date)
        # Only today and the past: a future day's board is only a forecast and is not kept up
        # to date as a page (each programmer's own forecast is on their profile).
        if day > services.today():
            raise forms.ValidationError(
                "That day has not happened yet; your forecast is on your profile."
            )
        if not selectors.day_is_browsable(self.board, day):
            raise forms.ValidationError("The board of that day is no longer kept.")
        return date

    def clean_country(self) -> str:
        return self.cleaned_data["country"].upper()

    def clean(self) -> dict:
        cleaned = super().clean()
        if cleaned.get("country") and cleaned.get("org"):
            raise forms.ValidationError("Filter by country or by organization, not both.")
        return cleaned

    @property
    def day(self) -> int:
        date = self.cleaned_data.get("date")
        return services.today() if date is None else leaderboard.date_to_day(date)

    @property
    def scope(self) -> str:
        if self.cleaned_data.get("country"):
            return f"country:{self.cleaned_data['country']}"
        if self.cleaned_data.get("org"):
            return f"org:{self.cleaned_data['org']}"
        return ""

    @property
    def scope_label(self) -> str:
        """The group in words, for the page."""
        if self.cleaned_data.get("country"):
            return f"country {self.cleaned_data['country']}"
        if self.cleaned_data.get("org"):
            return f"organization {self.cleaned_data['org']}"
        return ""

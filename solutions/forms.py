"""Forms: they check what a browser sends; the services decide what it means."""

from __future__ import annotations

import datetime as dt

from django import forms
from django.conf import settings
from django.contrib.auth.forms import UserCreationForm
from django.templatetags.static import static
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django_countries import countries

from . import clock, leaderboard, selectors, services
from .models import MAX_SCORE, Board, Programmer
from .rules import (
    ORGANIZATION_MAX_LENGTH,
    Scope,
    country_unknown,
    country_validator,
    handle_validator,
)
from .selectors import users_logging_in_as

MAX_ANSWER_LENGTH = 1000


class FlagSelect(forms.Select):
    """A country select followed by the chosen country's flag; static/site.js swaps the flag
    as the choice changes (no inline handler: the CSP allows only the site's own scripts)."""

    def __init__(self, attrs: dict | None = None) -> None:
        super().__init__({"data-flag-select": "", **(attrs or {})})

    def render(self, name, value, attrs=None, renderer=None) -> SafeString:
        select = super().render(name, value, attrs, renderer)
        code = str(value or "").lower()
        flag = static(f"flags/{code}.gif" if code else "flags/__.gif")
        return format_html(
            '<span class="flag-select">{}<img class="flag" src="{}" alt="" width="16" '
            'height="11" data-flag-pattern="{}"></span>',
            select,
            flag,
            f"{settings.STATIC_URL}flags/{{code}}.gif",
        )


def country_choices() -> list[tuple[str, str]]:
    """The country select's choices: none, or a country (read at each form, so they are lazy)."""
    return [("", "—"), *countries]


class SignupForm(UserCreationForm):
    """A user account and the programmer on the boards: the handle is both the public name and
    the name to log in with, so there is one name to pick."""

    country = forms.ChoiceField(
        required=False,
        widget=FlagSelect,
        help_text="Shown as a flag beside your handle; you can rank among its programmers.",
    )
    organization = forms.CharField(
        max_length=100, required=False, help_text="University or company."
    )

    class Meta(UserCreationForm.Meta):
        fields = ("username",)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        username = self.fields["username"]
        username.label = "Handle"
        username.max_length = 32
        username.widget.attrs["maxlength"] = "32"
        username.validators = [handle_validator]
        username.help_text = (
            "Your public name on the boards, and the name you log in with: 1 to 32 letters, "
            "digits, _ or -."
        )
        self.fields["country"].choices = country_choices()

    def clean_username(self) -> str:
        """The handle is free as a programmer's handle (judges may have registered it) and as a
        login name, in any case, and does not look like another programmer's."""
        handle = self.cleaned_data["username"]
        taken = Programmer.objects.handle_is(handle).exists()
        if taken or users_logging_in_as(handle).exists():
            raise forms.ValidationError("That handle is taken.", code="handle_taken")
        services.handle_check_unlike_others(handle)  # before the password is hashed
        return handle

    def programmer_fields(self) -> dict[str, str]:
        return {
            "handle": self.cleaned_data["username"],
            "country": self.cleaned_data["country"],
            "organization": self.cleaned_data["organization"],
        }


class AnswerForm(forms.Form):
    # Not stripped: a problem may compare answers exactly as written.
    answer = forms.CharField(
        max_length=MAX_ANSWER_LENGTH,
        strip=False,
        widget=forms.TextInput(attrs={"autocomplete": "off", "autofocus": True}),
    )
    # A scored problem's result (best-score boards); the field exists on scored problems only.
    score = forms.IntegerField(required=False, min_value=0, max_value=MAX_SCORE)

    def __init__(
        self, *args, programmer: Programmer | None = None, scored: bool = False, **kwargs
    ) -> None:
        super().__init__(*args, **kwargs)
        self.programmer = programmer
        if not scored:
            del self.fields["score"]

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
        return super().clean()


class PageQueryForm(forms.Form):
    """`?page=` of a paged list that is not a board (a problem's solvers)."""

    page = forms.IntegerField(required=False, min_value=1, max_value=1_000_000)


class BoardQueryForm(forms.Form):
    """The query string of a board page: which day, page, group and programmer to show."""

    date = forms.DateField(required=False, input_formats=["%Y-%m-%d"])
    page = forms.IntegerField(required=False, min_value=1, max_value=1_000_000)
    q = forms.CharField(required=False, max_length=32, validators=[handle_validator])
    country = forms.CharField(required=False, max_length=2, validators=[country_validator])
    org = forms.CharField(required=False, max_length=ORGANIZATION_MAX_LENGTH)
    find = forms.CharField(required=False, max_length=10)
    # "How many scored this or more": the board page's sentence under the table.
    min = forms.IntegerField(required=False, min_value=1, max_value=10**9)

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
        if day > clock.today():
            raise forms.ValidationError(
                "That day has not happened yet; your forecast is on your profile."
            )
        if not selectors.day_is_browsable(self.board, day):
            raise forms.ValidationError("The board of that day is no longer kept.")
        return date

    def clean_country(self) -> str:
        code = self.cleaned_data["country"].upper()
        if refusal := country_unknown(code):
            raise forms.ValidationError(refusal)
        return code

    def clean(self) -> dict:
        cleaned = super().clean()
        if cleaned.get("country") and cleaned.get("org"):
            raise forms.ValidationError("Filter by country or by organization, not both.")
        return cleaned

    @property
    def day(self) -> int:
        date = self.cleaned_data.get("date")
        return clock.today() if date is None else leaderboard.date_to_day(date)

    @property
    def _scope(self) -> Scope:
        return Scope.of(
            country=self.cleaned_data.get("country", ""), org=self.cleaned_data.get("org", "")
        )

    @property
    def scope(self) -> str:
        return str(self._scope)

    @property
    def scope_label(self) -> str:
        """The group in words, for the page."""
        return self._scope.label

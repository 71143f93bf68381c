"""Forms of the account page: they check what a browser sends; `accounts.services` acts on it."""

from __future__ import annotations

from django import forms
from django.contrib.auth import authenticate
from django.contrib.auth import forms as auth_forms
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest

from solutions.forms import SignupForm, country_choices
from solutions.models import Programmer


def password_is_right(request: HttpRequest, user: AbstractBaseUser, password: str) -> bool:
    """Check the signed-in user's password like a login: wrong ones count towards the same
    lockout (django-axes), so somebody holding a stolen session cannot guess the password to
    change it, change the email address or delete the account; past the limit axes answers
    429."""
    checked = authenticate(request, username=user.get_username(), password=password)
    return checked is not None and checked.pk == user.pk


class EmailForm(forms.Form):
    """A new address, with the account's password: the address password resets go to is the
    key to the account, so a stolen session alone must not be able to change it (see
    `password_is_right`)."""

    email = forms.EmailField(
        label="Email address",
        max_length=Programmer._meta.get_field("email_pending").max_length,
        help_text="We mail a link to it; the address is used once you follow the link.",
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )
    current_password = forms.CharField(
        label="Your password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, *args, request: HttpRequest, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.request = request
        self.user = request.user

    def clean_email(self) -> str:
        email = self.cleaned_data["email"]
        if self.user.email and email.lower() == self.user.email.lower():
            raise forms.ValidationError("That is already your address.", code="same")
        return email

    def clean_current_password(self) -> str:
        password = self.cleaned_data["current_password"]
        if not password_is_right(self.request, self.user, password):
            raise forms.ValidationError("That is not your password.", code="wrong_password")
        return password


class GroupsForm(forms.Form):
    """Country and organization, with the very fields of the sign-up form (one definition of
    what each may be)."""

    country = SignupForm.base_fields["country"]
    organization = SignupForm.base_fields["organization"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["country"].choices = country_choices()


class DeleteForm(forms.Form):
    password = forms.CharField(
        label="Your password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, *args, request: HttpRequest, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.request = request

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        if not password_is_right(self.request, self.request.user, password):
            raise forms.ValidationError("That is not your password.", code="wrong_password")
        return password


class PasswordChangeForm(auth_forms.PasswordChangeForm):
    """Django's form, with the old password checked like a login (see `password_is_right`)."""

    def __init__(self, user: AbstractBaseUser, *args, request: HttpRequest, **kwargs) -> None:
        super().__init__(user, *args, **kwargs)
        self.request = request
        # Django's form focuses the old password, which scrolls the account page down to the
        # third of its forms: only a refused form takes the focus (see full_clean).
        self.fields["old_password"].widget.attrs.pop("autofocus", None)

    def full_clean(self) -> None:
        """Check the form; when refused, its first field with an error takes the focus."""
        super().full_clean()
        refused = next((name for name in self.errors if name in self.fields), None)
        if refused is not None:
            self.fields[refused].widget.attrs["autofocus"] = True

    def clean_old_password(self) -> str:
        old_password = self.cleaned_data["old_password"]
        if not password_is_right(self.request, self.user, old_password):
            raise forms.ValidationError(
                self.error_messages["password_incorrect"], code="password_incorrect"
            )
        return old_password

"""Writes of the account page: a confirmed email address, a programmer's groups, deleting an
account, and the throttles that bound the emails a visitor can make the site send.

- **Email.** `User.email` holds only a *confirmed* address: the one alert emails and password
  resets go to. An address asked for on the account page (with the account's password) waits
  in `Programmer.email_pending` until the link mailed to it is followed. The link carries a
  signed, timestamped token (`TimestampSigner`, its own salt) naming the user and the address,
  so it cannot be forged or pointed at another address, it expires, and asking for another
  address makes it stale. The confirmed address is told of both steps (`_tell_old_address`):
  whoever took over a session and the password shows up in the owner's mailbox before the
  reset link goes elsewhere.
- **Groups.** A programmer's country and organization are copied into their entries on every
  board (the group views filter on them), so a change goes through `programmer_refresh_boards`:
  their entries are recomputed from their own solves, at the cost of their solves alone.
- **Deleting.** The solves log is the source of truth every board is rebuilt from, so deleting
  an account keeps its solves and makes their programmer anonymous (see `account_delete`).
- **Throttles.** The site's rate limits (`limits`): at most a few emails per hour per email
  address and per client address.
"""

from __future__ import annotations

import datetime as dt
import secrets

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, User
from django.core import signing
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from solutions import limits
from solutions.models import Programmer
from solutions.services import programmer_refresh_boards, programmer_set_visibility

# The salt the links were first signed with, when these pages lived in `solutions`: changing it
# would void every link already mailed.
EMAIL_LINK_SALT = "solutions.account.email-confirmation"
EMAIL_LINK_MAX_AGE = dt.timedelta(days=3)

HOUR = 3600
CONFIRMATIONS_PER_HOUR = 5  # confirmation emails one account may ask for
RESETS_PER_EMAIL_PER_HOUR = 3  # password reset emails to one address
RESETS_PER_CLIENT_PER_HOUR = 10  # password reset requests from one client address

DELETED_HANDLE_PREFIX = "deleted-"


class EmailLinkInvalid(ValueError):
    """A confirmation link that was altered, has expired or was replaced by a newer one."""


class Throttled(Exception):
    """Too many emails asked for in this hour."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


# --- throttles -------------------------------------------------------------------------------

CONFIRMATIONS = limits.Limit("email-confirm", CONFIRMATIONS_PER_HOUR, HOUR)
RESETS_PER_CLIENT = limits.Limit("reset-client", RESETS_PER_CLIENT_PER_HOUR, HOUR)
RESETS_PER_EMAIL = limits.Limit("reset-email", RESETS_PER_EMAIL_PER_HOUR, HOUR)


def _throttle(message: str, hits: list[tuple[limits.Limit, str]]) -> None:
    """Count one hit on each (limit, key), or raise Throttled (counting nothing) when any is
    used up. Keys are compared lowercase: an email address in any case is one address."""
    try:
        limits.limit_take_all([(limit, key.strip().lower()) for limit, key in hits])
    except limits.Limited as over:
        raise Throttled(message, over.retry_after) from None


def password_reset_throttle(*, client: str, email: str) -> None:
    """Count a password reset request; raises Throttled past the hourly limit of the client
    address or of the email address (counted whether or not an account has it, so the answer
    tells nobody which addresses are known)."""
    _throttle(
        "Too many password reset emails asked for: try again within the hour.",
        [(RESETS_PER_CLIENT, client), (RESETS_PER_EMAIL, email)],
    )


# --- email -----------------------------------------------------------------------------------


def _email_signer() -> signing.TimestampSigner:
    return signing.TimestampSigner(salt=EMAIL_LINK_SALT)


def email_link_token(*, user: AbstractBaseUser, email: str) -> str:
    """The token of a confirmation link: who asked for which address, signed and dated."""
    return _email_signer().sign_object({"user": user.pk, "email": email})


def account_email_request(*, programmer: Programmer, email: str) -> None:
    """Keep `email` as the programmer's pending address and mail it a confirmation link.

    The confirmed address (if any) stays in use until the link is followed; a newer request
    replaces the pending address and so makes older links stale. Raises Throttled past
    `CONFIRMATIONS_PER_HOUR` for the account."""
    _throttle(
        "Too many confirmation emails asked for: try again within the hour.",
        [(CONFIRMATIONS, str(programmer.user_id))],
    )
    programmer.email_pending = email
    programmer.save(update_fields=["email_pending"])
    _tell_old_address(
        programmer.user,
        "Your leaderboard address is about to change",
        f"Somebody signed in as {programmer.handle} asked to use {email} for the account "
        "instead of this address. It changes once the link mailed there is followed.",
    )
    token = email_link_token(user=programmer.user, email=email)
    context = {
        "handle": programmer.handle,
        "link": settings.SITE_URL.rstrip("/") + reverse("account_email_confirm", args=[token]),
        "days": EMAIL_LINK_MAX_AGE.days,
    }
    send_mail(
        subject="Confirm your email address",
        message=render_to_string("account/email_confirm_email.txt", context),
        from_email=None,
        recipient_list=[email],
    )


def email_link_read(*, token: str) -> tuple[User, str]:
    """(the user, the address) a confirmation link confirms. Raises EmailLinkInvalid for an
    altered, expired or stale link (the account asked for another address since, confirmed it,
    or was deleted)."""
    try:
        claim = _email_signer().unsign_object(token, max_age=EMAIL_LINK_MAX_AGE)
    except signing.SignatureExpired as error:
        raise EmailLinkInvalid(
            "This link has expired: ask for a new one on your account page."
        ) from error
    except signing.BadSignature as error:
        raise EmailLinkInvalid(
            "This link is not valid: copy the whole link from the email."
        ) from error
    programmer = Programmer.objects.select_related("user").filter(user_id=claim.get("user")).first()
    email = str(claim.get("email", ""))
    if programmer is None or not email or programmer.email_pending.lower() != email.lower():
        raise EmailLinkInvalid(
            "This link is no longer in use: your account page shows the address waiting for "
            "confirmation."
        )
    return programmer.user, email


def account_email_confirm(*, token: str) -> User:
    """Follow a confirmation link: its address becomes the user's email. Raises
    EmailLinkInvalid (see `email_link_read`)."""
    with transaction.atomic():
        user, email = email_link_read(token=token)
        old = user.email
        user.email = email
        user.save(update_fields=["email"])
        Programmer.objects.filter(user=user).update(email_pending="")
    if old:
        message = (
            f"The leaderboard account {user.get_username()} now uses {email}: alerts and "
            "password resets go there, not to this address any more."
        )
        _tell_old_address(user, "Your leaderboard address changed", message, address=old)
    return user


def _tell_old_address(
    user: AbstractBaseUser, subject: str, news: str, address: str | None = None
) -> None:
    """Mail the account's confirmed address (or `address`, the one it had) what is happening
    to it, and what to do if it was not its owner. Nothing when there is none."""
    address = address if address is not None else user.email
    if not address:
        return
    context = {"news": news, "account": settings.SITE_URL.rstrip("/") + reverse("account")}
    send_mail(
        subject=subject,
        message=render_to_string("account/email_changed_email.txt", context),
        from_email=None,
        recipient_list=[address],
    )


def account_email_remove(*, user: AbstractBaseUser) -> None:
    """Forget the user's addresses, confirmed and pending: no more emails go out to them."""
    with transaction.atomic():
        user.email = ""
        user.save(update_fields=["email"])
        Programmer.objects.filter(user=user).update(email_pending="")


# --- groups ----------------------------------------------------------------------------------


def programmer_groups_change(*, programmer: Programmer, country: str, organization: str) -> bool:
    """Set a programmer's country and organization, and move their rows on every board from
    the old groups' views to the new ones. Returns whether anything changed.

    The entries copy the groups, so they are recomputed from the programmer's own solves
    (`programmer_refresh_boards`): the cost is their solves and the number of boards, whoever
    else is on the boards. Off the boards (hidden, banned) there is nothing to move."""
    country, organization = country.upper(), organization.strip()
    if (programmer.country, programmer.organization) == (country, organization):
        return False
    programmer.country, programmer.organization = country, organization
    programmer.save(update_fields=["country", "organization"])
    if programmer.on_boards:
        programmer_refresh_boards(programmer=programmer)
    return True


# --- deleting --------------------------------------------------------------------------------


def account_delete(*, user: AbstractBaseUser) -> Programmer | None:
    """Delete a user's account; their programmer, if any, leaves every board and stays in the
    solves log as an anonymous programmer. Returns that programmer.

    Why the programmer is kept: the solves log is the source of truth that every board,
    standing and rank history is rebuilt from, and other programmers' ranks were earned against
    it; deleting the solves would rewrite the past days of every board. So the programmer
    row stays, with nothing that names the person: a generated handle (`deleted-<id>`, so the
    old handle is free for a new sign-up), no user, groups or pending address, and hidden, so
    the boards and standings close up at once (through the same service as a hide in the
    admin). Staff could unhide it; it would come back on the boards only as `deleted-<id>`, and
    its profile stays gone (`deleted_at`).

    The boards go first: if the rest fails, the account is still there to try again with."""
    programmer = Programmer.objects.filter(user=user).first()
    if programmer is not None:
        programmer_set_visibility(programmer=programmer, hidden=True)
    with transaction.atomic():
        if programmer is not None:
            _programmer_anonymize(programmer)
        user.delete()
    return programmer


def _programmer_anonymize(programmer: Programmer) -> None:
    programmer.user, programmer.deleted_at = None, timezone.now()
    programmer.country, programmer.organization, programmer.email_pending = "", "", ""
    programmer.handle = f"{DELETED_HANDLE_PREFIX}{programmer.pk}"
    try:
        with transaction.atomic():
            programmer.save()
    except IntegrityError:  # somebody picked that handle: add a random tail to it
        programmer.handle = f"{DELETED_HANDLE_PREFIX}{programmer.pk}-{secrets.token_hex(4)}"
        programmer.save()

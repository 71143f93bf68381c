"""The API's two kinds of bearer token.

- **Service tokens** let a judge or game server post solves. They are random, long-lived until
  revoked, and stored only as a SHA-256 hash: the token has 256 bits of entropy, so a fast hash is
  enough (a slow password hash protects guessable secrets, which these are not).
- **Access tokens** let a programmer's app read their own standing. They are signed (not stored)
  with the site's SECRET_KEY, carry their expiry, and live for an hour. Each also carries a
  keyed hash of the account's password hash (`_password_stamp`, like Django's sessions and
  reset links): a new password, changed or reset, ends every token made before it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core import signing
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac

from .models import ServiceToken

SERVICE_TOKEN_PREFIX = "lbs_"  # tells a leaked token apart at a glance (and to secret scanners)
ACCESS_TOKEN_LIFETIME = dt.timedelta(hours=1)
ACCESS_TOKEN_SALT = "solutions.api.access-token"
MAX_TOKEN_LENGTH = 512  # anything longer is not ours: refuse before hashing or unsigning it


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def service_token_generate() -> tuple[str, str]:
    """A new service token and the hash to store for it."""
    token = SERVICE_TOKEN_PREFIX + secrets.token_urlsafe(32)
    return token, token_hash(token)


def service_token_create(
    *, name: str, created_by: AbstractBaseUser | None = None
) -> tuple[ServiceToken, str]:
    """A new service token. The token itself is returned once and never stored."""
    token, hashed = service_token_generate()
    service_token = ServiceToken.objects.create(name=name, token_hash=hashed, created_by=created_by)
    return service_token, token


def service_token_authenticate(*, token: str) -> ServiceToken | None:
    """The active service token matching `token`, stamped as used; None otherwise."""
    if not token or len(token) > MAX_TOKEN_LENGTH:
        return None
    service_token = ServiceToken.objects.filter(token_hash=token_hash(token), active=True).first()
    if service_token is not None:
        now = timezone.now()
        # One write a minute at most, so a busy judge does not turn every solve into an UPDATE.
        if service_token.last_used_at is None or now - service_token.last_used_at > dt.timedelta(
            minutes=1
        ):
            ServiceToken.objects.filter(pk=service_token.pk).update(last_used_at=now)
            service_token.last_used_at = now
    return service_token


@dataclass(frozen=True)
class AccessToken:
    token: str
    expires_at: dt.datetime


def _password_stamp(user: AbstractBaseUser) -> str:
    """A keyed hash of the user's password hash: it changes with the password, and tells
    nothing of it (the token's payload is signed, not hidden)."""
    return salted_hmac(ACCESS_TOKEN_SALT, user.password, algorithm="sha256").hexdigest()[:32]


def access_token_issue(*, user: AbstractBaseUser) -> AccessToken:
    """A signed token for `user` that expires in ACCESS_TOKEN_LIFETIME, or with their password."""
    expires_at = (timezone.now() + ACCESS_TOKEN_LIFETIME).replace(microsecond=0)
    claims = {"uid": user.pk, "exp": int(expires_at.timestamp()), "pw": _password_stamp(user)}
    token = signing.dumps(claims, salt=ACCESS_TOKEN_SALT)
    return AccessToken(token=token, expires_at=expires_at)


def access_token_user(*, token: str) -> AbstractBaseUser | None:
    """The active user an unexpired access token was issued to, if their password is still the
    one it was issued under; None for anything else.

    Two locks on the expiry: the signature's own timestamp (max_age), and the `exp` the token
    carries, which must be there. A token signed without either is refused, and so is one
    without the password stamp.
    """
    if not token or len(token) > MAX_TOKEN_LENGTH:
        return None
    try:
        payload = signing.loads(
            token, salt=ACCESS_TOKEN_SALT, max_age=ACCESS_TOKEN_LIFETIME.total_seconds()
        )
    except signing.BadSignature:  # also SignatureExpired
        return None
    except ValueError:  # signed with our key but without a timestamp: Django trips over it
        return None
    if not isinstance(payload, dict):
        return None
    expires, uid, stamp = payload.get("exp"), payload.get("uid"), payload.get("pw")
    if type(expires) is not int or type(uid) is not int or type(stamp) is not str:
        return None
    if expires <= timezone.now().timestamp():
        return None
    user = get_user_model().objects.filter(pk=uid, is_active=True).first()
    if user is None or not constant_time_compare(stamp, _password_stamp(user)):
        return None
    return user

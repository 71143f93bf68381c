"""The API's two kinds of bearer token as django-ninja auth classes (the tokens themselves are
`solutions.tokens`). A session cookie never authorizes anything here: only the header does."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest
from ninja.security import HttpBearer

from .. import limits, tokens
from ..models import ServiceToken
from .errors import rate_limited, unauthorized


def bearer_token(request: HttpRequest) -> str:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


class ServiceTokenBearer(HttpBearer):
    """A judge or game server: a service token made by staff."""

    openapi_description = (
        "A service token made by staff (admin or `manage.py create_service_token`)"
    )

    def __call__(self, request: HttpRequest) -> ServiceToken:
        return self.authenticate(request, bearer_token(request))

    def authenticate(self, request: HttpRequest, token: str) -> ServiceToken:
        """The token, within its write rate (only writes take a service token)."""
        service_token = tokens.service_token_authenticate(token=token)
        if service_token is None:
            raise unauthorized("Send a service token: Authorization: Bearer <token>.")
        limit = limits.token_writes()
        try:
            limits.limit_take(limit=limit, key=str(service_token.pk))
        except limits.Limited as over:
            raise rate_limited(over.retry_after, limit.allowed) from None
        return service_token


class AccessTokenBearer(HttpBearer):
    """A programmer's app: an unexpired access token from POST /api/v1/auth/token."""

    openapi_description = "A token from POST /api/v1/auth/token"

    def __call__(self, request: HttpRequest) -> AbstractBaseUser:
        return self.authenticate(request, bearer_token(request))

    def authenticate(self, request: HttpRequest, token: str) -> AbstractBaseUser:
        user = tokens.access_token_user(token=token)
        if user is None:
            raise unauthorized(
                "Send an unexpired access token from POST /api/v1/auth/token: "
                "Authorization: Bearer <token>."
            )
        return user


class OptionalAccessTokenBearer(AccessTokenBearer):
    """The holder of an access token when one is sent (an invalid one is refused, not
    ignored), else the session's user, who may be anonymous."""

    def __call__(self, request: HttpRequest) -> AbstractBaseUser | AnonymousUser:
        token = bearer_token(request)
        if not token:
            return request.user  # an AnonymousUser is truthy, so ninja lets the call through
        return self.authenticate(request, token)


# One instance each: ninja names the security schemes of the OpenAPI document after the class.
service_token = ServiceTokenBearer()
access_token = AccessTokenBearer()
optional_access_token = OptionalAccessTokenBearer()

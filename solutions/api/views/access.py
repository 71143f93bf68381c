"""Access tokens: a programmer's app trades a username and password for a one-hour token
(`POST /auth/token`), which reads its holder's own standing (`/me`)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import authenticate, user_logged_in
from django.http import HttpRequest
from pydantic import ValidationError as PydanticValidationError

from ... import tokens
from ..errors import ApiError
from ..parser import json_body
from ..schemas.access import AccessToken, Credentials
from ..schemas.fields import Error
from .common import ApiRouter

router = ApiRouter()


def credentials_of(request: HttpRequest) -> Credentials:
    """Username and password from a JSON body of a request sent by the client itself, not by a
    page of another site in a browser.

    The API takes no cookies, so it needs no CSRF token; but a page anywhere could still make
    its visitors' browsers post wrong passwords here and lock them out of their own accounts
    (the lockout counts per username and address). A browser cannot send a JSON body to another
    site without that site's leave (CORS), so only JSON is taken (415 for anything else, a form
    included), and a request the browser itself marks as cross-site (Sec-Fetch-Site) is 403."""
    if request.headers.get("Sec-Fetch-Site", "").lower() == "cross-site":
        raise ApiError(403, "cross_site_request", "Pages of other sites cannot log in here.")
    if request.content_type != "application/json":
        raise ApiError(
            415, "unsupported_media_type", "Send the credentials as JSON (application/json)."
        )
    try:
        return Credentials.model_validate(json_body(request))
    except PydanticValidationError as error:
        raise ApiError(400, "invalid_body", "Send a username and a password.") from error


@router.post(
    "/auth/token",
    response={
        200: AccessToken,
        **{status: Error for status in (400, 401, 403, 413, 415, 429)},
    },
    operation_id="createAccessToken",
    summary="Trade a username and password for a one-hour access token",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": Credentials.model_json_schema()}},
        }
    },
)
def auth_token(request: HttpRequest) -> dict:
    """Failed logins are counted per username and client address (django-axes, the same
    count as the login page's and the admin's): too many lock that pair out for a while, with
    429, even for the right password. The username is matched in any case, like a handle. The
    body is JSON only (415 otherwise), and a browser's cross-site request is 403. A token ends
    after an hour, or at once when the account's password changes or is reset."""
    credentials = credentials_of(request)
    user = authenticate(request, username=credentials.username, password=credentials.password)
    if getattr(request, "axes_locked_out", False):
        raise locked_out()
    if user is None:
        raise ApiError(401, "invalid_credentials", "Wrong username or password.")
    # A token is a login without a session: the signal lets axes clear this pair's failures
    # and Django stamp last_login, as for a login on the page.
    user_logged_in.send(sender=type(user), request=request, user=user)
    token = tokens.access_token_issue(user=user)
    return {"token": token.token, "expires_at": token.expires_at}


def locked_out() -> ApiError:
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    return ApiError(
        429,
        "too_many_attempts",
        "Too many failed logins: try again later.",
        {"Retry-After": str(seconds)},
    )

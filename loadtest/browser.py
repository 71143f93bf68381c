"""A simulated browser on the far side of the deployment's TLS proxy.

The proxy tells the site the request came over https (`X-Forwarded-Proto`) and from which
client (`X-Forwarded-For`), so the site's production settings hold as they are: HTTPS redirects,
Secure cookies, strict CSRF referer checks. The browser it stands for is on https, so it keeps
and sends those Secure cookies; `requests` would drop them on the plain-HTTP hop to gunicorn.
"""

from __future__ import annotations

import requests
from requests.cookies import RequestsCookieJar

PROXY_HEADERS = {"X-Forwarded-Proto": "https"}


class BrowserCookies(RequestsCookieJar):
    """Keeps Secure cookies sendable over the proxy's plain-HTTP hop."""

    def set_cookie(self, cookie, *args, **kwargs):
        cookie.secure = False
        return super().set_cookie(cookie, *args, **kwargs)


def behind_proxy(session: requests.Session, client_address: str) -> requests.Session:
    """Make `session` a browser at `client_address` reaching the site through the proxy."""
    session.cookies = BrowserCookies()
    session.headers.update({**PROXY_HEADERS, "X-Forwarded-For": client_address})
    return session

"""What a delivery sends: the body in the receiver's format and the signature (pure, no I/O).

An event is stored as a payload: ``{"text": one line, "title", "url", "lines": [...], "data":
{...}}``. Discord gets ``content`` (the line) and one embed (title, link, the lines); Slack gets
``text`` in its markup (``&``, ``<`` and ``>`` escaped, the link as ``<url|title>``); a generic
receiver gets the event, its key, the line, the link and the data as JSON.

Every delivery is signed, whatever its kind: ``X-Leaderboard-Timestamp`` is the Unix time of the
attempt and ``X-Leaderboard-Signature`` is ``sha256=`` and the hex HMAC-SHA256, keyed with the
hook's secret, of ``<timestamp>.<body>``: a receiver recomputes it over the raw body, compares in
constant time and refuses old timestamps (a replay).
"""

from __future__ import annotations

import hashlib
import hmac
import json

DISCORD_CONTENT_MAX = 2000  # Discord refuses longer messages
DISCORD_DESCRIPTION_MAX = 4096
TIMESTAMP_HEADER = "X-Leaderboard-Timestamp"
SIGNATURE_HEADER = "X-Leaderboard-Signature"
EVENT_HEADER = "X-Leaderboard-Event"


def _slack_escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def body_of(kind: str, event: str, key: str, payload: dict) -> bytes:
    """The JSON body a receiver of `kind` (discord, slack or generic) is sent."""
    text, title, url = payload["text"], payload["title"], payload["url"]
    lines = payload.get("lines", [])
    if kind == "discord":
        embed = {"title": title[:256], "url": url, "description": "\n".join(lines)}
        message = {
            "content": text[:DISCORD_CONTENT_MAX],
            "embeds": [{**embed, "description": embed["description"][:DISCORD_DESCRIPTION_MAX]}],
            "allowed_mentions": {"parse": []},  # a title or handle never pings anybody
        }
    elif kind == "slack":
        link = f"<{url}|{_slack_escaped(title)}>"
        message = {"text": "\n".join([_slack_escaped(text), *map(_slack_escaped, lines), link])}
    else:
        message = {"event": event, "key": key, "text": text, "url": url, "data": payload["data"]}
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The value of the signature header for this body sent at `timestamp`."""
    signed = f"{timestamp}.".encode() + body
    return "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def signature_is_valid(secret: str, timestamp: int, body: bytes, header: str) -> bool:
    """What a receiver checks (the tests use it as one would)."""
    return hmac.compare_digest(signature(secret, timestamp, body), header)

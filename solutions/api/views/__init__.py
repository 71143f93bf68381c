"""The solutions part of the JSON API: judges post solves with a service token, apps read boards
and standings, and a programmer's app reads its holder's standing with an access token.

A router per concern: `solves`, `boards` (the boards, a board day's page, its groups and score
ranges, standings), `programmers` (search and a year of activity), `problems` and `access`
(access tokens), joined below in the order of the OpenAPI document. Each view validates through
its schemas, calls services and selectors (the same ones as the pages, so every rank agrees)
and shapes the answer; the lookups and shapes they share are in `common`. Errors are raised as
`ApiError`.
"""

from __future__ import annotations

from ninja import Router

from . import access, boards, problems, programmers, solves

router = Router()
for part in (solves, boards, programmers, problems, access):
    router.add_router("", part.router)

"""The JSON API of the solutions app (a django-ninja router; `leaderboard_site.api` mounts it
with the other apps' routers under /api/v1/). Shared parts for the other apps' routers: `errors`
(the error shape), `auth` (the bearer tokens), `parser`, `schemas` and `idempotent`."""

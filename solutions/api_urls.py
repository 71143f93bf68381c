"""Routes of the JSON API under /api/v1/ (paths fixed by DESIGN.md, described in openapi.json)."""

from django.urls import path, re_path

from competitions import api as competition_api

from . import api

urlpatterns = [
    path("openapi.json", api.openapi, name="api-openapi"),
    path("solves", api.solves, name="api-solves"),
    path("boards", api.boards, name="api-boards"),
    path("boards/<slug:slug>", api.board_detail, name="api-board"),
    path("boards/<slug:slug>/programmers/<str:handle>", api.programmer_detail, name="api-standing"),
    path("auth/token", api.auth_token, name="api-auth-token"),
    path("me", api.me, name="api-me"),
    path("submissions", competition_api.submissions, name="api-submissions"),
    path(
        "competitions/<slug:slug>/standings",
        competition_api.competition_standings,
        name="api-competition-standings",
    ),
    # Last: any other path under /api/v1/ is a 404 in the API's error shape, not an HTML page.
    re_path(r"^", api.not_found, name="api-not-found"),
]

"""Routes of the pages (the contract in DESIGN.md: keep these paths and names)."""

from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/signup/", views.signup, name="signup"),
    path("problems/", views.problems, name="problems"),
    path("problems/<slug:slug>/", views.problem, name="problem"),
    path("submissions/", views.submissions, name="submissions"),
    path("leaderboard/", views.board, name="leaderboard"),
    path("leaderboard/<slug:slug>/", views.board, name="board"),
    path("u/<str:handle>/", views.profile, name="profile"),
    path("u/<str:handle>/card.svg", views.profile_card, name="profile_card"),
    # The live fragments of the board and the profile: the same views, rendering only the part
    # that moves (polled by static/solutions/live.js).
    path("leaderboard/<slug:slug>/live/", views.board, {"fragment": True}, name="board_live"),
    path("u/<str:handle>/live/", views.profile, {"fragment": True}, name="profile_live"),
]

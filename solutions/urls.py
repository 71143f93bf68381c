"""Routes of the pages (the contract in DESIGN.md: keep these paths and names)."""

from django.urls import path

from .views import boards, problems, profiles, signup, submissions

urlpatterns = [
    path("", boards.home, name="home"),
    path("accounts/signup/", signup.signup, name="signup"),
    path("problems/", problems.problems, name="problems"),
    path("problems/<slug:slug>/", problems.problem, name="problem"),
    path("submissions/", submissions.submissions, name="submissions"),
    path("leaderboard/", boards.board, name="leaderboard"),
    path("leaderboard/<slug:slug>/", boards.board, name="board"),
    path("u/<str:handle>/", profiles.profile, name="profile"),
    path("u/<str:handle>/card.svg", profiles.profile_card, name="profile_card"),
    # The live fragments of the board and the profile: the same views, rendering only the part
    # that moves (polled by static/solutions/live.js).
    path("leaderboard/<slug:slug>/live/", boards.board, {"fragment": True}, name="board_live"),
    path("u/<str:handle>/live/", profiles.profile, {"fragment": True}, name="profile_live"),
]

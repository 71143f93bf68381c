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
]

"""Routes of the activity app (included at the site root), and the live fragments of the board
and profile pages (the same views, rendering only the part that moves)."""

from django.urls import path

from solutions import views as pages

from . import views

app_name = "activity"

urlpatterns = [
    path("leaderboard/<slug:slug>/live/", pages.board, {"fragment": True}, name="board_live"),
    path("u/<str:handle>/live/", pages.profile, {"fragment": True}, name="profile_live"),
    path("u/<str:handle>/follow/", views.follow, name="follow"),
    path("u/<str:handle>/unfollow/", views.unfollow, name="unfollow"),
    path("notifications/", views.notifications, name="notifications"),
    path("account/alerts/", views.alert_settings, name="alert_settings"),
]

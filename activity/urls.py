"""Routes of the activity app (included at the site root)."""

from django.urls import path

from . import views

app_name = "activity"

urlpatterns = [
    path("u/<str:handle>/follow/", views.follow, name="follow"),
    path("u/<str:handle>/unfollow/", views.unfollow, name="unfollow"),
    path("notifications/", views.notifications, name="notifications"),
    path("account/alerts/", views.alert_settings, name="alert_settings"),
]

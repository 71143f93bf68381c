"""Routes of the competition pages under /competitions/."""

from django.urls import path

from . import views

urlpatterns = [
    path("", views.competition_list, name="competitions"),
    path("<slug:slug>/", views.competition_detail, name="competition"),
    path("<slug:slug>/register/", views.competition_register, name="competition_register"),
    path("<slug:slug>/standings/", views.competition_standings, name="competition_standings"),
    path(
        "<slug:slug>/standings/live/",
        views.competition_standings_live,
        name="competition_standings_live",
    ),
    path(
        "<slug:slug>/problems/<str:letter>/submit/",
        views.competition_submit,
        name="competition_submit",
    ),
]

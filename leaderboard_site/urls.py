from django.contrib import admin
from django.urls import include, path

from . import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("accounts.urls")),  # before Django's: it answers some of its paths
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", api.urls()),
    path("competitions/", include("competitions.urls")),
    path("", include("activity.urls")),
    path("", include("solutions.urls")),
]

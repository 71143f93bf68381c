from django.contrib import admin
from django.urls import include, path

from . import api, logins

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("accounts.urls")),  # before Django's: it answers some of its paths
    path("accounts/login/", logins.login_page, name="login"),  # the lockout checked first
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/v1/", api.urls()),
    path("competitions/", include("competitions.urls")),
    path("", include("activity.urls")),
    path("", include("solutions.urls")),
]

"""Routes of the account page and of Django's password views in the site's look. Included before
`django.contrib.auth.urls`, so these answer its paths and names; the rest (login, logout, the
"done" pages) are Django's own views with the site's templates."""

from django.urls import path

from . import views

urlpatterns = [
    path("account/", views.account, name="account"),
    path("account/email/", views.account_email, name="account_email"),
    path("account/email/remove/", views.account_email_remove, name="account_email_remove"),
    path(
        "account/email/confirm/<str:token>/",
        views.account_email_confirm,
        name="account_email_confirm",
    ),
    path("account/groups/", views.account_groups, name="account_groups"),
    path("account/delete/", views.account_delete, name="account_delete"),
    path(
        "accounts/password_change/",
        views.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path(
        "accounts/password_reset/",
        views.PasswordResetView.as_view(),
        name="password_reset",
    ),
    path(
        "accounts/reset/<uidb64>/<token>/",
        views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
]

"""Routes of the JSON API under /api/v1/."""

from django.urls import path

urlpatterns: list = []

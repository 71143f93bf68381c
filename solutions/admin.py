"""The admin site: problems, programmers and leaderboard definitions."""

from django.contrib import admin  # noqa: F401

# Service tokens live beside the API.
from . import api_admin  # noqa: E402,F401

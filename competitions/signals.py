"""Signals the competitions app sends, for the apps built on it (webhooks)."""

from django.dispatch import Signal

# Sent once, by whoever archived a competition's final standings (`competition_archive`):
# `sender` is Competition, `competition` the archived one (its `final_standings` set).
competition_archived = Signal()

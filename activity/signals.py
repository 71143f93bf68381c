"""Signals the activity app sends, for the apps built on it (webhooks)."""

from django.dispatch import Signal

# Sent by each alert check that finds a programmer who shares their rank drops (their alert
# preferences) dropping past the board's rule: `sender` is AlertRule, with `rule`, `programmer`
# and `drop` (`samples.Drop`). A drop lasts, so later checks send it again: the same drop is
# named by `drop.best_at`.
rank_drop_shared = Signal()

"""Writes, by concern: `follows` (follows and alert preferences), `locks` (the locks that keep
each board's jobs single), `history` (rank-history snapshots), `alerts` (rank samples and
rank-drop alerts) and `notifications` (their in-app notifications and emails).

The jobs run from Celery beat (see `activity.tasks`) and are safe to run again at any time:
history documents are keyed by (board, programmer, day), rank samples by (board, programmer),
and a notification by its drop, so a retry, a crash half-way or a second run changes nothing
twice.
"""

"""Rank-drop alerts: the ranks of everybody watched are sampled every minute, and a drop past a
rule's places within its minutes is notified to whoever watches (`notifications`) and, when the
programmer chose so, posted to the community's chats (the `rank_drop_shared` signal)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

from django.utils import timezone
from pymongo import UpdateOne

from solutions.clock import today
from solutions.models import Board, Programmer

from .. import mongo, samples, selectors
from ..models import AlertPreferences, AlertRule, Follow
from ..signals import rank_drop_shared
from .locks import job_lock
from .notifications import Recipient, notification_send

SAMPLES_REFRESH = dt.timedelta(hours=1)  # keeps a watched programmer's samples from expiring


@dataclass
class AlertReport:
    board: str
    skipped: bool = False
    watched: int = 0
    drops: int = 0
    notified: int = 0
    emailed: int = 0


def alert_watch_list() -> dict[int, list[Recipient]]:
    """{programmer id: who to tell when they drop}: programmers who opted in about themselves,
    and the programmers followed by users who opted in about those they follow.

    Emails go to `User.email`, which holds only a confirmed address: the account page sets it
    once the link mailed to the address is followed, and keeps an unconfirmed one aside
    (`accounts.services`). Without one, the alert is an in-app notification only."""
    watch: dict[int, list[Recipient]] = defaultdict(list)
    own = AlertPreferences.objects.filter(
        my_rank_drops=True, user__is_active=True, user__programmer__isnull=False
    ).values_list("user_id", "user__email", "user__programmer__id")
    for user_id, email, programmer_id in own:
        watch[programmer_id].append(Recipient(user_id, email, own=True))
    followed = Follow.objects.filter(
        follower__alert_preferences__followed_rank_drops=True, follower__is_active=True
    ).values_list("follower_id", "follower__email", "followed_id")
    for user_id, email, programmer_id in followed:
        watch[programmer_id].append(Recipient(user_id, email, own=False))
    for programmer_id in rank_drops_shared():
        watch.setdefault(programmer_id, [])  # watched; nobody notified, the chats are told
    return dict(watch)


def rank_drops_shared() -> set[int]:
    """The programmers who chose to have their rank drops posted to the community's chats."""
    shared = AlertPreferences.objects.filter(
        share_rank_drops=True, user__is_active=True, user__programmer__isnull=False
    )
    return set(shared.values_list("user__programmer__id", flat=True))


def samples_record(
    *, board: Board, ranks: dict[int, int | None], now: dt.datetime
) -> dict[int, list[samples.Change]]:
    """Add the current ranks to each watched programmer's rank changes (written only when the
    rank changed, or now and then so the samples of somebody still watched do not expire)."""
    ids = {pid: f"{board.slug}:{pid}" for pid in ranks}
    stored = {
        doc["programmer_id"]: doc
        for doc in mongo.rank_samples().find({"_id": {"$in": list(ids.values())}})
    }
    changes_of, operations = {}, []
    for pid, rank in ranks.items():
        document = stored.get(pid, {})
        before = document.get("changes", [])
        after = samples.with_rank(before, rank, now, keep=mongo.MAX_CHANGES)
        changes_of[pid] = after
        if after is not before or now - document["updated_at"] > SAMPLES_REFRESH:
            operations.append(
                UpdateOne(
                    {"_id": ids[pid]},
                    {
                        "$set": {
                            "board": board.slug,
                            "programmer_id": pid,
                            "changes": after,
                            "updated_at": now,
                        }
                    },
                    upsert=True,
                )
            )
    if operations:
        mongo.rank_samples().bulk_write(operations, ordered=False)
    return changes_of


def alerts_check(*, board: Board) -> AlertReport:
    """Sample the ranks of everybody watched on a board and alert on drops (beat: every minute).

    Never runs twice at once for a board (a lock). A drop already notified is found again on
    the next runs while it lasts; its notification key makes that a no-op."""
    report = AlertReport(board=board.slug)
    rule = AlertRule.objects.filter(board=board, enabled=True).select_related("board").first()
    if rule is None:
        return report
    with job_lock(f"alerts:{board.slug}") as acquired:
        if not acquired:
            report.skipped = True
            return report
        now = samples.to_millis(timezone.now())
        watch = alert_watch_list()
        shared = rank_drops_shared()
        programmers = Programmer.objects.in_bulk(list(watch))
        report.watched = len(programmers)
        places = selectors.places_of(board=board, day=today(), programmers=programmers.values())
        ranks = {pid: places[pid].rank if pid in places else None for pid in programmers}
        for pid, changes in samples_record(board=board, ranks=ranks, now=now).items():
            drop = samples.rank_drop(changes, now, rule.minutes)
            if drop is None or drop.places < rule.places:
                continue
            report.drops += 1
            if pid in shared:
                rank_drop_shared.send(
                    sender=AlertRule, rule=rule, programmer=programmers[pid], drop=drop
                )
            for recipient in watch[pid]:
                created, emailed = notification_send(
                    rule=rule, programmer=programmers[pid], recipient=recipient, drop=drop, now=now
                )
                report.notified += created
                report.emailed += emailed
    return report

"""Follows and alert preferences: what a user asks to be told about."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from solutions.models import Programmer

from ..models import AlertPreferences, Follow

FOLLOW_LIMIT = 500


def follow_create(*, user: AbstractBaseUser, programmer: Programmer) -> Follow:
    """Follow a programmer (following twice is a no-op). Raises ValidationError for oneself or
    past `FOLLOW_LIMIT`."""
    if getattr(user, "programmer", None) == programmer:
        raise ValidationError("You cannot follow yourself.", code="self")
    existing = Follow.objects.filter(follower=user, followed=programmer).first()
    if existing:
        return existing
    if Follow.objects.filter(follower=user).count() >= FOLLOW_LIMIT:
        raise ValidationError(f"You can follow up to {FOLLOW_LIMIT} programmers.", code="limit")
    try:
        with transaction.atomic():
            return Follow.objects.create(follower=user, followed=programmer)
    except IntegrityError:  # a double click racing itself
        return Follow.objects.get(follower=user, followed=programmer)


def follow_delete(*, user: AbstractBaseUser, programmer: Programmer) -> bool:
    """Stop following. False when the user was not following."""
    deleted, _ = Follow.objects.filter(follower=user, followed=programmer).delete()
    return deleted > 0


def alert_preferences_save(
    *,
    user: AbstractBaseUser,
    my_rank_drops: bool,
    followed_rank_drops: bool,
    share_rank_drops: bool = False,
) -> AlertPreferences:
    preferences, _ = AlertPreferences.objects.update_or_create(
        user=user,
        defaults={
            "my_rank_drops": my_rank_drops,
            "followed_rank_drops": followed_rank_drops,
            "share_rank_drops": share_rank_drops,
        },
    )
    return preferences

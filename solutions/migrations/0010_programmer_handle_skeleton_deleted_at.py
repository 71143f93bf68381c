"""Two new facts about a programmer.

- ``handle_skeleton``: what the handle reads as (`rules.handle_skeleton`), indexed, so a new
  handle that looks like a taken one (``dem0`` beside ``demo``) is found by one equality. Filled
  here for every programmer; the field works it out on every write from now on. Not unique: the
  programmers of before may already hold look-alikes, and a judge may still report them.
- ``deleted_at``: when the account was deleted (the programmer row stays, anonymous, for the
  solves log). The accounts deleted before it are the rows `account_delete` left: no user,
  hidden, and named ``deleted-<id>`` (with a random tail when that was taken); they are marked
  as deleted now, the moment this runs, since the real one was not kept.
"""

import re

from django.db import migrations, models
from django.utils import timezone

import solutions.models
from solutions.rules import handle_skeleton

BATCH = 1000


def programmers_fill(apps, schema_editor) -> None:
    Programmer = apps.get_model("solutions", "Programmer")
    now = timezone.now()
    batch = []
    programmers = Programmer.objects.only("handle", "user", "hidden", "deleted_at")
    for programmer in programmers.iterator(BATCH):
        programmer.handle_skeleton = handle_skeleton(programmer.handle)
        if _left_by_a_deletion(programmer):
            programmer.deleted_at = now
        batch.append(programmer)
        if len(batch) == BATCH:
            Programmer.objects.bulk_update(batch, ["handle_skeleton", "deleted_at"])
            batch = []
    Programmer.objects.bulk_update(batch, ["handle_skeleton", "deleted_at"])


def _left_by_a_deletion(programmer) -> bool:
    anonymous = re.fullmatch(rf"deleted-{programmer.pk}(-[0-9a-f]{{8}})?", programmer.handle)
    return programmer.user_id is None and programmer.hidden and anonymous is not None


class Migration(migrations.Migration):
    dependencies = [("solutions", "0009_login_name_index")]

    operations = [
        migrations.AddField(
            model_name="programmer",
            name="deleted_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="programmer",
            name="handle_skeleton",
            field=solutions.models.HandleSkeletonField(
                db_index=True, default="", editable=False, max_length=64
            ),
        ),
        migrations.RunPython(programmers_fill, migrations.RunPython.noop),
    ]

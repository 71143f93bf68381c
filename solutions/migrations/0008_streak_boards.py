"""Streak boards: the metric `streak`, and the two default streak boards seeded like the first
three (`0002_seed_boards`): the current streak of each day, and the longest streak ever."""

from django.db import migrations, models

BOARDS = [
    {"slug": "streak", "title": "Current streak", "window": "rolling", "window_days": 2,
     "metric": "streak", "position": 3},
    {"slug": "longest-streak", "title": "Longest streak", "window": "all_time", "window_days": 7,
     "metric": "streak", "position": 4},
]  # fmt: skip


def seed_boards(apps, schema_editor):
    Board = apps.get_model("solutions", "Board")
    for board in BOARDS:
        Board.objects.get_or_create(slug=board["slug"], defaults=board)


def unseed_boards(apps, schema_editor):
    Board = apps.get_model("solutions", "Board")
    Board.objects.filter(slug__in=[board["slug"] for board in BOARDS]).delete()


class Migration(migrations.Migration):
    dependencies = [("solutions", "0007_programmer_handle_prefix")]

    operations = [
        migrations.AlterField(
            model_name="board",
            name="metric",
            field=models.CharField(
                choices=[
                    ("solved", "Problems solved"),
                    ("points", "Points"),
                    ("streak", "Streak of solve days"),
                ],
                default="solved",
                max_length=16,
            ),
        ),
        migrations.RunPython(seed_boards, unseed_boards),
    ]

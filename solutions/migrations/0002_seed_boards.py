from django.db import migrations

BOARDS = [
    {"slug": "last-7-days", "title": "Last 7 days", "window": "rolling", "window_days": 7,
     "is_default": True, "position": 0},
    {"slug": "last-30-days", "title": "Last 30 days", "window": "rolling", "window_days": 30,
     "position": 1},
    {"slug": "all-time", "title": "All time", "window": "all_time", "window_days": 7,
     "position": 2},
]


def seed_boards(apps, schema_editor):
    Board = apps.get_model("solutions", "Board")
    for board in BOARDS:
        Board.objects.get_or_create(slug=board["slug"], defaults=board)


def unseed_boards(apps, schema_editor):
    apps.get_model("solutions", "Board").objects.filter(slug__in=[b["slug"] for b in BOARDS]).delete()


class Migration(migrations.Migration):
    dependencies = [("solutions", "0001_initial")]
    operations = [migrations.RunPython(seed_boards, unseed_boards)]

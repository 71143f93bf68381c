"""Login names in any case through an index: sign-up checks that a handle is nobody's login name
without regard to case (`forms.SignupForm.clean_username`), an equality on ``LOWER(username)``
that this index serves on SQLite and PostgreSQL instead of a scan of the users table. Django's
``auth_user`` belongs to another app, so the index is made in SQL here, the same on both."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("solutions", "0008_streak_boards"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX auth_user_username_ci ON auth_user (LOWER(username))",
            reverse_sql="DROP INDEX auth_user_username_ci",
        )
    ]

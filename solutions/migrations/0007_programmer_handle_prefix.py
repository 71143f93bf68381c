"""Handles stay unique without regard to case, now by a byte-ordered key (`Bytewise`) whose index
also serves the search by the start of a handle on SQLite and PostgreSQL. On SQLite the index is
the same as before; on PostgreSQL it compares in the "C" collation, whatever the database's."""

import django.db.models.functions.text
from django.db import migrations, models

import solutions.models


class Migration(migrations.Migration):
    dependencies = [("solutions", "0006_programmer_email_pending")]

    operations = [
        migrations.RemoveConstraint(model_name="programmer", name="programmer_handle_ci_unique"),
        migrations.AddConstraint(
            model_name="programmer",
            constraint=models.UniqueConstraint(
                solutions.models.Bytewise(django.db.models.functions.text.Lower("handle")),
                name="programmer_handle_ci_unique",
            ),
        ),
    ]

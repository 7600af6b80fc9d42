"""Seed llm.structured_outputs ("auto": ask for schema-shaped replies, stop asking a model that refuses)."""
from django.db import migrations

from config_admin.registry import seed_rows


class Migration(migrations.Migration):
    dependencies = [("config_admin", "0008_lower_abstention_bar")]
    operations = [migrations.RunPython(seed_rows, migrations.RunPython.noop)]

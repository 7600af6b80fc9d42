"""Seed the long-term memory keys (existing rows are never overwritten)."""
from django.db import migrations

from config_admin.registry import seed_rows


class Migration(migrations.Migration):
    dependencies = [("config_admin", "0003_roles")]
    operations = [migrations.RunPython(seed_rows, migrations.RunPython.noop)]

"""Seed every declared AI config key with its default (existing rows are never overwritten)."""
from django.db import migrations

from config_admin.registry import seed_rows


class Migration(migrations.Migration):
    dependencies = [("config_admin", "0001_initial")]
    operations = [migrations.RunPython(seed_rows, migrations.RunPython.noop)]

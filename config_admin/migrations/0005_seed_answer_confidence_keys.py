"""Seed the rows of keys declared after 0002 (the calibrated-confidence thresholds); edited rows are kept."""
from django.db import migrations

from config_admin.registry import seed_rows


class Migration(migrations.Migration):
    dependencies = [("config_admin", "0004_memory_keys")]
    operations = [migrations.RunPython(seed_rows, migrations.RunPython.noop)]

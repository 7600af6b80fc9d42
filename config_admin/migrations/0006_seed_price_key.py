"""Seed the per-model token price row (empty: usage is counted, not priced, until an admin sets prices)."""
from django.db import migrations

from config_admin.registry import seed_rows


class Migration(migrations.Migration):
    dependencies = [("config_admin", "0005_seed_answer_confidence_keys")]
    operations = [migrations.RunPython(seed_rows, migrations.RunPython.noop)]

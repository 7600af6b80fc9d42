"""Move `answer.confidence_high` from 0.7 to its new default 0.9 where no administrator has set it.

The score is the calibrated probability that the answer is right; at 0.7 the answers badged high were right 0.91–0.94
of the time on the evaluation sets, short of the 95 % the badge promises. 0.9 is the lowest value at which the tuning
halves reach it (docs/decisions/confidence-calibration.md). Only the badge changes: the high band becomes medium for
the answers between the two values. A row that still holds the old default and has no recorded change was never
edited, so it follows the default; a value an administrator chose is kept.
"""
from django.db import migrations

KEY = "answer.confidence_high"
OLD, NEW = "0.7", "0.9"


def forwards(apps, schema_editor):
    config = apps.get_model("config_admin", "SysAiConfig")
    config.objects.filter(key=KEY, value=OLD, changes__isnull=True).update(value=NEW)


def backwards(apps, schema_editor):
    config = apps.get_model("config_admin", "SysAiConfig")
    config.objects.filter(key=KEY, value=NEW, changes__isnull=True).update(value=OLD)


class Migration(migrations.Migration):
    dependencies = [("config_admin", "0011_abstention_bar_to_one_hundredth")]
    operations = [migrations.RunPython(forwards, backwards)]

"""Move `answer.abstain_below` from 0.1 to its new default 0.03 where no administrator has set it.

Between the bar and `answer.confidence_medium` the offline answer quotes the closest evidence under the
low-relevance label, which flags the answer as surely as "not in the knowledge base" does; below the bar a
question the documents answer in other words than its own gets no answer at all. A row that still holds the
old default and has no recorded change was never edited, so it follows the default; a value an administrator
chose (a change is recorded) is kept.
"""
from django.db import migrations

KEY = "answer.abstain_below"
OLD, NEW = "0.1", "0.03"


def forwards(apps, schema_editor):
    config = apps.get_model("config_admin", "SysAiConfig")
    config.objects.filter(key=KEY, value=OLD, changes__isnull=True).update(value=NEW)


def backwards(apps, schema_editor):
    config = apps.get_model("config_admin", "SysAiConfig")
    config.objects.filter(key=KEY, value=NEW, changes__isnull=True).update(value=OLD)


class Migration(migrations.Migration):
    dependencies = [("config_admin", "0009_seed_structured_outputs_key")]
    operations = [migrations.RunPython(forwards, backwards)]

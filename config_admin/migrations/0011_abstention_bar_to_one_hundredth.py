"""Move `answer.abstain_below` from 0.03 to its new default 0.01 where no administrator has set it.

As for the move to 0.03: above the bar the offline answer quotes the closest evidence under the low-relevance
label, which flags the answer as surely as "not in the knowledge base" does, so only questions the documents
answer in other words than their own change (they get the passage instead of nothing). A row that still holds the
old default and has no recorded change was never edited, so it follows the default; a value an administrator chose
(a change is recorded) is kept.
"""
from django.db import migrations

KEY = "answer.abstain_below"
OLD, NEW = "0.03", "0.01"


def forwards(apps, schema_editor):
    config = apps.get_model("config_admin", "SysAiConfig")
    config.objects.filter(key=KEY, value=OLD, changes__isnull=True).update(value=NEW)


def backwards(apps, schema_editor):
    config = apps.get_model("config_admin", "SysAiConfig")
    config.objects.filter(key=KEY, value=NEW, changes__isnull=True).update(value=OLD)


class Migration(migrations.Migration):
    dependencies = [("config_admin", "0010_abstention_bar_to_three_hundredths")]
    operations = [migrations.RunPython(forwards, backwards)]

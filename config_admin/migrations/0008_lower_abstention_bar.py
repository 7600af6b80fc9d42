"""Move `answer.abstain_below` from 0.3 to its new default 0.1 where no administrator has set it.

Below the bar the offline answer says the knowledge base does not answer; between it and
`answer.confidence_medium` it quotes the closest evidence under the low-relevance label. A row that still
holds the old default and has no recorded change was never edited, so it follows the default; a value an
administrator chose (a change is recorded) is kept.
"""
from django.db import migrations

KEY = "answer.abstain_below"
OLD, NEW = "0.3", "0.1"


def forwards(apps, schema_editor):
    config = apps.get_model("config_admin", "SysAiConfig")
    config.objects.filter(key=KEY, value=OLD, changes__isnull=True).update(value=NEW)


def backwards(apps, schema_editor):
    config = apps.get_model("config_admin", "SysAiConfig")
    config.objects.filter(key=KEY, value=NEW, changes__isnull=True).update(value=OLD)


class Migration(migrations.Migration):
    dependencies = [("config_admin", "0007_verbose_names")]
    operations = [migrations.RunPython(forwards, backwards)]

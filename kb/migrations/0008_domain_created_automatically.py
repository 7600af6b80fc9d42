from django.db import migrations, models


def mark_rows_made_for_documents(apps, schema_editor):
    """Rows so far were created for documents, unless an administrator added one by hand; which is not
    recorded. A row whose description is blank or the offline template's "<domain>：…" was never
    described by anyone and counts as automatic; any other text may be an administrator's, so that row
    is kept when its domain empties (the safe side: an empty row is cheaper than a lost description)."""
    KnowledgeDomain = apps.get_model("kb", "KnowledgeDomain")
    for row in KnowledgeDomain.objects.only("pk", "domain_id", "description"):
        description = (row.description or "").strip()
        if not description or description.startswith(f"{row.domain_id}："):
            KnowledgeDomain.objects.filter(pk=row.pk).update(created_automatically=True)


class Migration(migrations.Migration):

    dependencies = [
        ('kb', '0007_grant_holder_message'),
    ]

    operations = [
        migrations.AddField(
            model_name='knowledgedomain',
            name='created_automatically',
            field=models.BooleanField(default=False, verbose_name='created automatically'),
        ),
        migrations.RunPython(mark_rows_made_for_documents, migrations.RunPython.noop),
    ]

"""Create the three role groups; their permissions are synced after every migrate (docmind.roles)."""
from django.db import migrations

ROLES = ("admin", "kb_editor", "member")


def create_groups(apps, schema_editor):
    group = apps.get_model("auth", "Group")
    for name in ROLES:
        group.objects.get_or_create(name=name)


class Migration(migrations.Migration):
    dependencies = [("config_admin", "0002_seed_keys"), ("auth", "0012_alter_user_first_name_max_length")]
    operations = [migrations.RunPython(create_groups, migrations.RunPython.noop)]

from django.conf import settings
from django.db import migrations, models
import django.db.models.deletion


class Migration(migrations.Migration):
    initial = True

    dependencies = [migrations.swappable_dependency(settings.AUTH_USER_MODEL)]

    operations = [
        migrations.CreateModel(
            name="SysAiConfig",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("key", models.CharField(max_length=128, unique=True)),
                ("value", models.TextField()),
                ("value_type", models.CharField(choices=[("int", "int"), ("float", "float"), ("bool", "bool"),
                                                         ("str", "str"), ("json", "json")], max_length=8)),
                ("category", models.CharField(db_index=True, max_length=64)),
                ("description", models.CharField(blank=True, max_length=512)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("updated_by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                                 related_name="+", to=settings.AUTH_USER_MODEL)),
            ],
            options={"db_table": "sys_ai_config", "ordering": ["category", "key"],
                     "verbose_name": "AI config entry", "verbose_name_plural": "AI configuration"},
        ),
        migrations.CreateModel(
            name="SysAiConfigChange",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("old_value", models.TextField()),
                ("new_value", models.TextField()),
                ("changed_at", models.DateTimeField(auto_now_add=True)),
                ("changed_by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                                                 related_name="+", to=settings.AUTH_USER_MODEL)),
                ("config", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="changes",
                                             to="config_admin.sysaiconfig")),
            ],
            options={"db_table": "sys_ai_config_change", "ordering": ["-changed_at", "-id"]},
        ),
    ]

"""App config: keeps role permissions in step with the models after every migrate."""
from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class ConfigAdminConfig(AppConfig):
    name = "config_admin"
    verbose_name = _("AI configuration")

    def ready(self) -> None:
        # apps not ready: docmind.roles imports django.contrib.auth.models, and this module loads before the models
        from docmind import roles

        post_migrate.connect(roles.sync_role_permissions, dispatch_uid="docmind-sync-roles")

"""The docmind app: the table of external MCP servers (McpServer); the rest of docmind is infrastructure."""
import logging

import jieba
from django.apps import AppConfig, apps
from django.contrib.auth import get_user_model
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.utils.translation import gettext_lazy as _

from docmind.telemetry import configure_tracing


class DocmindConfig(AppConfig):
    name = "docmind"
    # What the admin index lists under it: the external MCP servers DocMind calls.
    verbose_name = _("Integrations")

    def ready(self) -> None:
        # django-axes names its app after its label only, so the admin index would say "Axes" in every language.
        if apps.is_installed("axes"):
            apps.get_app_config("axes").verbose_name = _("Login lockout")
        # django-tasks' database backend names its app in English, outside any catalogue.
        if apps.is_installed("django_tasks_db"):  # the module; its label differs
            apps.get_app_config("django_tasks_database").verbose_name = _("Background tasks")

        # jieba sets its own logger to DEBUG on import, overriding LOGGING.
        jieba.setLogLevel(logging.WARNING)

        # Off (nothing installed, nothing exported) unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
        configure_tracing()

        # apps not ready: roles imports the auth models, which load after this module
        from docmind import roles

        # A request that changes a user or its groups reads roles afresh after the change.
        user_model = get_user_model()
        for signal in (post_save, post_delete):
            signal.connect(roles.forget_read_roles, sender=user_model, dispatch_uid=f"docmind-roles-{signal}")
        m2m_changed.connect(roles.forget_read_roles, sender=user_model.groups.through, dispatch_uid="docmind-roles-m2m")

"""The docmind app: the table of external MCP servers (McpServer); the rest of docmind is infrastructure."""
import logging

import jieba
from django.apps import AppConfig, apps
from django.utils.translation import gettext_lazy as _

from docmind.telemetry import configure_tracing


class DocmindConfig(AppConfig):
    name = "docmind"
    verbose_name = "DocMind"

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

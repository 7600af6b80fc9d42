"""The docmind app: project-wide admin (users and roles) and management commands."""
import logging

from django.apps import AppConfig


class DocmindConfig(AppConfig):
    name = "docmind"
    verbose_name = "DocMind"

    def ready(self) -> None:
        import jieba

        # jieba sets its own logger to DEBUG on import, overriding LOGGING.
        jieba.setLogLevel(logging.WARNING)

        from docmind.telemetry import configure_tracing

        # Off (nothing installed, nothing exported) unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
        configure_tracing()

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

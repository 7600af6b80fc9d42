"""The project as an installed app, so that Django finds its admin module and its management commands."""
from django.apps import AppConfig


class ProjectConfig(AppConfig):
    name = "project"
    verbose_name = "DocMind project"

from django.apps import AppConfig


class DocmindConfig(AppConfig):
    name = "docmind"
    verbose_name = "DocMind"

"""The evaluation app: sets, runs and their results."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class EvalsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "evals"
    verbose_name = _("Evaluation")

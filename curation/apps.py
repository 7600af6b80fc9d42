from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CurationConfig(AppConfig):
    name = "curation"
    verbose_name = _("Curated answers")

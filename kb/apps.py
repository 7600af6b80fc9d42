from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class KbConfig(AppConfig):
    name = "kb"
    verbose_name = _("Knowledge base")

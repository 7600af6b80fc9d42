"""The apikeys app."""
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

from apikeys import schema  # noqa: F401  (registers the Bearer scheme with drf-spectacular)


class ApiKeysConfig(AppConfig):
    name = "apikeys"
    verbose_name = _("API keys")

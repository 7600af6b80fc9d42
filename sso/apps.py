from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SsoConfig(AppConfig):
    name = "sso"
    verbose_name = _("Sign-in")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # apps not ready: the receivers import models; this module loads before them
        from sso import signals  # noqa: F401 - connects the receivers

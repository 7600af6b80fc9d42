from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = _("Audit trail")

    def ready(self) -> None:
        # apps not ready: the receivers and the registry import models; this module loads before them
        from audit import receivers, registry

        registry.register_models()
        receivers.connect()

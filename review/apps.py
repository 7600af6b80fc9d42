from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = _("Review queue")

    def ready(self) -> None:
        # Answers and verdicts are saved by the chat app, which knows nothing of the queue: it listens.
        # apps not ready: the receivers import models; this module loads before them
        from review import receivers  # noqa: F401

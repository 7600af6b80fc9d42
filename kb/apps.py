from django.apps import AppConfig
from django.contrib.auth import get_user_model
from django.db.models.signals import pre_delete
from django.utils.translation import gettext_lazy as _


class KbConfig(AppConfig):
    name = "kb"
    verbose_name = _("Knowledge base")

    def ready(self) -> None:
        # apps not ready: auth's models cannot be imported while this module loads, before the models
        from django.contrib.auth.models import Group

        pre_delete.connect(_delete_grants_first, sender=get_user_model(), dispatch_uid="kb-grants-of-user")
        pre_delete.connect(_delete_grants_first, sender=Group, dispatch_uid="kb-grants-of-group")


def _delete_grants_first(sender, instance, **kwargs) -> None:
    """A deleted user's or group's grants go before it. Django's cascade first sets a nullable foreign key to
    NULL and deletes the row after; a grant with neither user nor group breaks its check constraint, which
    MariaDB enforces on that update, so deleting any user or group holding a grant failed there."""
    # apps not ready: this module loads before the models (Group, KbGrant)
    from django.contrib.auth.models import Group

    from kb.models import KbGrant

    KbGrant.objects.filter(**{"group" if isinstance(instance, Group) else "user": instance}).delete()

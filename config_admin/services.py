"""Writes to sys_ai_config: validated, recorded in the change history."""
from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from config_admin.models import SysAiConfig, SysAiConfigChange
from config_admin.registry import spec


@transaction.atomic
def config_set(*, key: str, value: str, user: AbstractBaseUser | None = None) -> SysAiConfig:
    """Validate `value` for `key` and store it in canonical form; raises ConfigValueError / UnknownConfigKey."""
    item = spec(key)
    canonical = item.canonical_for_write(value)
    row = SysAiConfig.objects.select_for_update().get(key=key)
    if row.value != canonical:
        SysAiConfigChange.objects.create(config=row, old_value=row.value, new_value=canonical, changed_by=user)
    row.value = canonical
    row.updated_by = user
    row.save()
    return row

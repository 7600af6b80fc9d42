"""Data migrations of config_admin: a new default reaches the rows no administrator has set, and no other."""
import importlib

import pytest
from django.apps import apps

from config_admin.models import SysAiConfig, SysAiConfigChange
from config_admin.registry import seed_rows

lower_bar = importlib.import_module("config_admin.migrations.0008_lower_abstention_bar")
lower_again = importlib.import_module("config_admin.migrations.0010_abstention_bar_to_three_hundredths")
lower_once_more = importlib.import_module("config_admin.migrations.0011_abstention_bar_to_one_hundredth")
raise_high_band = importlib.import_module("config_admin.migrations.0012_high_band_from_nine_tenths")
# Each migration that moves a default: its old value, its new one.
DEFAULT_MOVES = [(lower_bar, "0.3", "0.1"), (lower_again, "0.1", "0.03"), (lower_once_more, "0.03", "0.01"),
                 (raise_high_band, "0.7", "0.9")]
NAMES = ["abstention-0.1", "abstention-0.03", "abstention-0.01", "high-band-0.9"]


@pytest.mark.django_db
@pytest.mark.parametrize("migration,old,new", DEFAULT_MOVES, ids=NAMES)
@pytest.mark.parametrize("direction", ["forwards", "backwards"])
def test_an_unedited_value_follows_the_default_both_ways(migration, old, new, direction):
    before, after = (old, new) if direction == "forwards" else (new, old)
    seed_rows(apps)
    SysAiConfig.objects.filter(key=migration.KEY).update(value=before)

    getattr(migration, direction)(apps, None)

    assert SysAiConfig.objects.get(key=migration.KEY).value == after


@pytest.mark.django_db
@pytest.mark.parametrize("migration,old,new", DEFAULT_MOVES, ids=NAMES)
def test_a_value_an_administrator_set_is_kept_even_at_the_old_default(migration, old, new):
    seed_rows(apps)
    row = SysAiConfig.objects.get(key=migration.KEY)
    row.value = old
    row.save()
    SysAiConfigChange.objects.create(config=row, old_value="0.5", new_value=old)

    migration.forwards(apps, None)

    assert SysAiConfig.objects.get(key=migration.KEY).value == old

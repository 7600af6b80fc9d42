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


@pytest.mark.django_db
@pytest.mark.parametrize("step,before,after", [
    (lower_bar.forwards, "0.3", "0.1"), (lower_bar.backwards, "0.1", "0.3"),
    (lower_again.forwards, "0.1", "0.03"), (lower_again.backwards, "0.03", "0.1"),
    (lower_once_more.forwards, "0.03", "0.01"), (lower_once_more.backwards, "0.01", "0.03"),
], ids=["forwards", "backwards", "again-forwards", "again-backwards", "third-forwards", "third-backwards"])
def test_an_unedited_abstention_bar_follows_the_default_both_ways(step, before, after):
    seed_rows(apps)
    SysAiConfig.objects.filter(key=lower_bar.KEY).update(value=before)

    step(apps, None)

    assert SysAiConfig.objects.get(key=lower_bar.KEY).value == after


@pytest.mark.django_db
def test_an_abstention_bar_an_administrator_set_is_kept_even_at_the_old_default():
    seed_rows(apps)
    row = SysAiConfig.objects.get(key=lower_bar.KEY)
    row.value = "0.3"
    row.save()
    SysAiConfigChange.objects.create(config=row, old_value="0.2", new_value="0.3")

    lower_bar.forwards(apps, None)

    assert SysAiConfig.objects.get(key=lower_bar.KEY).value == "0.3"



@pytest.mark.django_db
@pytest.mark.parametrize("step,before,after", [
    (raise_high_band.forwards, "0.7", "0.9"), (raise_high_band.backwards, "0.9", "0.7"),
], ids=["forwards", "backwards"])
def test_an_unedited_high_band_threshold_follows_the_default_both_ways(step, before, after):
    seed_rows(apps)
    SysAiConfig.objects.filter(key=raise_high_band.KEY).update(value=before)

    step(apps, None)

    assert SysAiConfig.objects.get(key=raise_high_band.KEY).value == after


@pytest.mark.django_db
def test_a_high_band_threshold_an_administrator_set_is_kept_even_at_the_old_default():
    seed_rows(apps)
    row = SysAiConfig.objects.get(key=raise_high_band.KEY)
    row.value = "0.7"
    row.save()
    SysAiConfigChange.objects.create(config=row, old_value="0.8", new_value="0.7")

    raise_high_band.forwards(apps, None)

    assert SysAiConfig.objects.get(key=raise_high_band.KEY).value == "0.7"

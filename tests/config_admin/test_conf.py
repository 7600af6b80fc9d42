"""The typed accessor: seeded rows, unknown keys, and edits seen by every process without a restart."""
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from config_admin.conf import AiConfigAccessor
from config_admin.models import SysAiConfig
from config_admin.registry import KEYS, ConfigValueError, UnknownConfigKey
from config_admin.services import config_set

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("seeded")]


def test_migration_seeds_every_declared_key():
    assert set(SysAiConfig.objects.values_list("key", flat=True)) >= {k.key for k in KEYS}


def test_snapshot_values_are_typed():
    snap = AiConfigAccessor().snapshot()
    assert snap["rag.context_max_tokens"] == 3000
    assert snap["agentic.enabled"] is True
    assert snap["mmr.lambda"] == pytest.approx(0.7)


def test_unknown_key_raises():
    with pytest.raises(UnknownConfigKey):
        AiConfigAccessor().get("rag.nope")


def test_a_row_of_the_wrong_type_raises_instead_of_a_silent_default():
    SysAiConfig.objects.filter(key="rag.context_max_tokens").update(value="lots")
    with pytest.raises(ConfigValueError, match="rag.context_max_tokens"):
        AiConfigAccessor().snapshot()


def test_an_edit_is_seen_by_two_independent_accessor_caches():
    first, second = AiConfigAccessor(), AiConfigAccessor()
    assert first.get("rag.context_max_tokens") == second.get("rag.context_max_tokens") == 3000
    config_set(key="rag.context_max_tokens", value="2048")
    assert first.get("rag.context_max_tokens") == 2048
    assert second.get("rag.context_max_tokens") == 2048


def test_config_set_records_who_changed_what(admin_user):
    config_set(key="mmr.lambda", value="0.5", user=admin_user)
    change = SysAiConfig.objects.get(key="mmr.lambda").changes.get()
    assert (change.old_value, change.new_value, change.changed_by) == ("0.7", "0.5", admin_user)


def test_config_set_refuses_a_bad_value_and_keeps_the_old_one():
    with pytest.raises(ConfigValueError):
        config_set(key="mmr.lambda", value="2")
    assert SysAiConfig.objects.get(key="mmr.lambda").value == "0.7"


_READER = """
import django, sys
django.setup()
from config_admin.conf import ai_config
print(ai_config.get("rag.context_max_tokens")); sys.stdout.flush()
sys.stdin.readline()
print(ai_config.get("rag.context_max_tokens")); sys.stdout.flush()
"""


@pytest.mark.django_db(transaction=True)
def test_an_edit_is_seen_by_another_process_on_its_next_read():
    db = settings.DATABASES["default"]
    env = {"DJANGO_SETTINGS_MODULE": "project.settings", "DOCMIND_DATA_DIR": str(settings.DATA_DIR),
           "PATH": "/usr/bin:/bin"}
    if db["ENGINE"].endswith("sqlite3"):
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    else:
        env["DATABASE_URL"] = f"mysql://{db['USER']}@{db['HOST']}:{db['PORT'] or 3306}/{db['NAME']}"
    reader = subprocess.Popen([sys.executable, "-c", _READER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=env, cwd=Path(__file__).resolve().parents[2])
    try:
        assert reader.stdout.readline().strip() == "3000"
        config_set(key="rag.context_max_tokens", value="1234")
        reader.stdin.write("\n")
        reader.stdin.flush()
        assert reader.stdout.readline().strip() == "1234"
    finally:
        reader.kill()
        reader.wait(timeout=10)

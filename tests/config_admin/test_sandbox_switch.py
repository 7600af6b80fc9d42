"""sandbox.enabled can be turned on only where the sandbox runner works; the admin says why not."""
import pytest
from django.urls import reverse
from django.utils import timezone

from chat.agentic.factory import build_orchestrator
from config_admin.conf import ai_config
from config_admin.models import SysAiConfig
from config_admin.registry import ConfigValueError
from config_admin.services import config_set

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("seeded")]


@pytest.fixture
def no_runner(settings):
    settings.SANDBOX_BWRAP = "/nonexistent/bwrap"


def _post(client, value: str):
    url = reverse("admin:config_admin_sysaiconfig_change", args=[SysAiConfig.objects.get(key="sandbox.enabled").pk])
    return url, client.post(url, {"value": value, "changes-TOTAL_FORMS": "0", "changes-INITIAL_FORMS": "0"})


def test_the_service_refuses_to_enable_it_without_the_runner(no_runner):
    with pytest.raises(ConfigValueError, match="bubblewrap"):
        config_set(key="sandbox.enabled", value="true")
    assert SysAiConfig.objects.get(key="sandbox.enabled").value == "false"
    config_set(key="sandbox.enabled", value="false")  # turning it off is always allowed


def test_the_admin_shows_why_it_cannot_be_enabled(client, admin_user, no_runner):
    client.force_login(admin_user)
    url, response = _post(client, "true")
    assert response.status_code == 200
    assert "cannot be turned on here" in response.content.decode()
    assert "bubblewrap" in client.get(url).content.decode()
    assert SysAiConfig.objects.get(key="sandbox.enabled").value == "false"


def test_it_can_be_enabled_where_the_runner_works(client, admin_user):
    client.force_login(admin_user)
    _, response = _post(client, "true")
    assert response.status_code == 302
    assert SysAiConfig.objects.get(key="sandbox.enabled").value == "true"


def test_an_enabled_row_on_a_machine_without_the_runner_withdraws_execute_code(no_runner):
    SysAiConfig.objects.filter(key="sandbox.enabled").update(value="true", updated_at=timezone.now())
    loop = build_orchestrator(snapshot=ai_config.snapshot(), chat_model=None, kb_ids=frozenset())
    assert loop.sandbox is None
    assert "executeCode" not in {t.name for t in loop.tools}

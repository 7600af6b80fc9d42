"""The AI-config admin: validation with a clear message, history visible, only administrators."""
import pytest
from django.urls import reverse

from config_admin.models import SysAiConfig

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("seeded")]


def _change_url(key: str) -> str:
    return reverse("admin:config_admin_sysaiconfig_change", args=[SysAiConfig.objects.get(key=key).pk])


def test_changelist_groups_rows_by_category_with_descriptions(client, admin_user):
    client.force_login(admin_user)
    page = client.get(reverse("admin:config_admin_sysaiconfig_changelist"), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "rag.context_max_tokens" in page
    assert "Token budget for the evidence chunks" in page
    assert "category" in page.lower()


def test_descriptions_are_shown_in_the_users_language(client, admin_user):
    client.force_login(admin_user)
    page = client.get(reverse("admin:config_admin_sysaiconfig_changelist"),
                      HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "提示词中证据块的令牌预算" in page and "Token budget for the evidence chunks" not in page


def test_admin_refuses_a_lambda_outside_zero_one(client, admin_user):
    client.force_login(admin_user)
    response = client.post(_change_url("mmr.lambda"), {"value": "1.7", "changes-TOTAL_FORMS": "0",
                                                       "changes-INITIAL_FORMS": "0"})
    assert response.status_code == 200
    assert "above the maximum" in response.content.decode()
    assert SysAiConfig.objects.get(key="mmr.lambda").value == "0.7"


def test_admin_edit_is_stored_and_shown_in_history(client, admin_user):
    client.force_login(admin_user)
    response = client.post(_change_url("rag.context_max_tokens"), {
        "value": "2500", "changes-TOTAL_FORMS": "0", "changes-INITIAL_FORMS": "0"})
    assert response.status_code == 302
    row = SysAiConfig.objects.get(key="rag.context_max_tokens")
    assert row.value == "2500" and row.updated_by == admin_user
    page = client.get(_change_url("rag.context_max_tokens")).content.decode()
    assert "3000" in page and "2500" in page  # old → new in the history inline


def test_enum_values_outside_their_set_are_refused(client, admin_user):
    client.force_login(admin_user)
    response = client.post(_change_url("grader.mode"), {"value": "sometimes", "changes-TOTAL_FORMS": "0",
                                                        "changes-INITIAL_FORMS": "0"})
    assert "is not one of heuristic, cross_encoder, disabled" in response.content.decode()


@pytest.mark.parametrize("who,status", [("kb_editor", 403), ("member", 302)])
def test_non_administrators_cannot_open_the_ai_config(client, request, who, status):
    client.force_login(request.getfixturevalue(who))
    response = client.get(reverse("admin:config_admin_sysaiconfig_changelist"))
    assert response.status_code == status  # members are not staff: sent to the admin login

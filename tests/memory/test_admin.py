"""The memory admin: state filter, supersede chain, invalidate / restore actions, no hard delete."""
import pytest

from memory.models import UserMemory
from memory.services import memory_save
from memory.types import MemoryCandidate

pytestmark = pytest.mark.django_db

LIST_URL = "/admin/memory/usermemory/"


@pytest.fixture
def staff(client, admin_user, memory_index, memory_cache):
    client.force_login(admin_user)
    return client


def _save(user, text, kind="profile"):
    return memory_save(user_id=user.pk, candidate=MemoryCandidate(memory_type=kind, content=text)).memory


def test_state_filter_separates_active_and_invalidated(staff, member):
    old = _save(member, "我在上海工作")
    new = _save(member, "我在北京工作")
    active = staff.get(LIST_URL, {"state": "active"}).context["cl"].result_list
    gone = staff.get(LIST_URL, {"state": "invalidated"}).context["cl"].result_list
    assert [m.pk for m in active] == [new.pk] and [m.pk for m in gone] == [old.pk]


def test_the_change_page_shows_the_supersede_chain(staff, member):
    old = _save(member, "我在上海工作")
    new = _save(member, "我在北京工作")
    page = staff.get(f"{LIST_URL}{old.pk}/change/").content.decode()
    assert f"#{old.pk}" in page and f"#{new.pk}" in page and "superseded" in page


def test_invalidate_and_restore_actions_use_the_services(staff, member, memory_index):
    row = _save(member, "我对花生过敏", "fact")
    staff.post(LIST_URL, {"action": "invalidate_selected", "_selected_action": [row.pk]})
    row.refresh_from_db()
    assert row.invalidated_reason == "admin" and memory_index.texts([row.pk]) == {}
    staff.post(LIST_URL, {"action": "restore_selected", "_selected_action": [row.pk]})
    row.refresh_from_db()
    assert row.invalidated_at is None and memory_index.texts([row.pk])


def test_there_is_no_hard_delete(staff, member):
    row = _save(member, "我对花生过敏", "fact")
    assert staff.post(f"{LIST_URL}{row.pk}/delete/", {"post": "yes"}).status_code == 403
    staff.post(LIST_URL, {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"})
    assert UserMemory.objects.filter(pk=row.pk).exists()

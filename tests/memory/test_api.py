"""/api/memories/: the caller's own memories only — list, create, edit, forget one, forget all."""
import pytest

from memory.models import UserMemory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _stores(memory_index, memory_cache):
    return None


def test_members_see_only_their_own_active_memories(member, other_member, member_client):
    mine = UserMemory.objects.create(user=member, content="偏好中文回答")
    UserMemory.objects.create(user=other_member, content="secret of bob")
    body = member_client.get("/api/memories/").json()
    assert [m["id"] for m in body["results"]] == [mine.id]


def test_another_users_memory_is_404_for_read_edit_and_delete(other_member, member_client):
    theirs = UserMemory.objects.create(user=other_member, content="secret of bob")
    assert member_client.get(f"/api/memories/{theirs.id}/").status_code == 404
    assert member_client.patch(f"/api/memories/{theirs.id}/", {"content": "mine now"}, format="json").status_code == 404
    assert member_client.delete(f"/api/memories/{theirs.id}/").status_code == 404
    theirs.refresh_from_db()
    assert theirs.invalidated_at is None and theirs.content == "secret of bob"


def test_delete_invalidates_softly(member, member_client):
    mine = UserMemory.objects.create(user=member, content="likes tea")
    assert member_client.delete(f"/api/memories/{mine.id}/").status_code == 204
    mine.refresh_from_db()
    assert mine.invalidated_at is not None and mine.invalidated_reason == "forgotten"
    assert member_client.get("/api/memories/").json()["results"] == []


def test_create_goes_through_conflict_handling(member, member_client):
    first = member_client.post("/api/memories/", {"content": "我在上海工作", "memory_type": "profile"}, format="json")
    assert first.status_code == 201 and first.json()["source"] == "user"
    again = member_client.post("/api/memories/", {"content": "我在上海工作", "memory_type": "profile"}, format="json")
    assert again.status_code == 200 and again.json()["action"] == "exact-duplicate"
    moved = member_client.post("/api/memories/", {"content": "我在北京工作", "memory_type": "profile"}, format="json")
    assert moved.status_code == 201 and moved.json()["replaced"] == [first.json()["id"]]


@pytest.mark.parametrize("body", [{"content": ""}, {"content": "x", "memory_type": "secret"}, {}])
def test_create_rejects_bad_input_clearly(member_client, body):
    response = member_client.post("/api/memories/", body, format="json")
    assert response.status_code == 400 and response.json()


def test_edit_changes_content_and_type(member, member_client):
    mine = member_client.post("/api/memories/", {"content": "我喜欢喝茶", "memory_type": "fact"},
                              format="json").json()
    edited = member_client.patch(f"/api/memories/{mine['id']}/", {"content": "我喜欢喝绿茶",
                                                                  "memory_type": "preference"}, format="json")
    assert edited.status_code == 200 and edited.json()["content"] == "我喜欢喝绿茶"
    assert edited.json()["memory_type"] == "preference"
    nothing = member_client.patch(f"/api/memories/{mine['id']}/", {}, format="json")
    assert nothing.status_code == 400
    # The message itself, never the repr of DRF's list of ErrorDetail objects.
    assert "ErrorDetail" not in nothing.json()["error"] and not nothing.json()["error"].startswith("[")


def test_forget_all_forgets_only_mine(member, other_member, member_client):
    UserMemory.objects.create(user=member, content="a")
    UserMemory.objects.create(user=member, content="b")
    UserMemory.objects.create(user=other_member, content="c")
    assert member_client.post("/api/memories/forget-all/").json() == {"forgotten": 2}
    assert UserMemory.objects.filter(invalidated_at__isnull=True).count() == 1


def test_anonymous_callers_are_refused(client):
    assert client.get("/api/memories/").status_code in (401, 403)

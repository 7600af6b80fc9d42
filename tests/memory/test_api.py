"""/api/memories/ shows and deletes the caller's own memories only."""
import pytest

from memory.models import UserMemory

pytestmark = pytest.mark.django_db


def test_members_see_only_their_own_active_memories(member, other_member, member_client):
    mine = UserMemory.objects.create(user=member, content="偏好中文回答")
    UserMemory.objects.create(user=other_member, content="secret of bob")
    body = member_client.get("/api/memories/").json()
    assert [m["id"] for m in body["results"]] == [mine.id]


def test_another_users_memory_is_404(other_member, member_client):
    theirs = UserMemory.objects.create(user=other_member, content="secret of bob")
    assert member_client.get(f"/api/memories/{theirs.id}/").status_code == 404
    assert member_client.delete(f"/api/memories/{theirs.id}/").status_code == 404
    assert UserMemory.objects.get(id=theirs.id).invalidated_at is None


def test_delete_invalidates_softly(member, member_client):
    mine = UserMemory.objects.create(user=member, content="likes tea")
    assert member_client.delete(f"/api/memories/{mine.id}/").status_code == 204
    mine.refresh_from_db()
    assert mine.invalidated_at is not None
    assert member_client.get("/api/memories/").json()["results"] == []

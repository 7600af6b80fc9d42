"""Deleting a user or a group deletes its grants, on every database (MariaDB checks the grant's constraint on
the cascade's intermediate update)."""
import pytest
from django.contrib.auth.models import Group

from kb.models import KbAccess, KbGrant
from kb.services import kb_create, kb_grant

pytestmark = pytest.mark.django_db


def test_deleting_a_user_deletes_their_grants(django_user_model):
    user = django_user_model.objects.create(username="leaving")
    kb_grant(kb=kb_create(name="base-user"), access=KbAccess.READ, user=user)
    user_id = user.pk
    user.delete()
    assert not KbGrant.objects.filter(user_id=user_id).exists()


def test_deleting_a_group_deletes_its_grants():
    group = Group.objects.create(name="dissolved team")
    kb_grant(kb=kb_create(name="base-group"), access=KbAccess.EDIT, group=group)
    group_id = group.pk
    group.delete()
    assert not KbGrant.objects.filter(group_id=group_id).exists()

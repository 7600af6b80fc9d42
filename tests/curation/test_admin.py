"""Leak probe of the curated-answer admin: an editor sees the pairs, and the names, of the bases it edits only."""
from __future__ import annotations

import pytest

from curation.models import QaPair
from kb import services
from kb.models import KbAccess

pytestmark = pytest.mark.django_db

SECRET, OWN, READ_ONLY = "ZEBRAQUARTZ", "MANGOFLUX", "PEARLCOMET"


@pytest.fixture
def editor(client, kb_editor, django_user_model):
    """The editor edits `Own`, reads `ReadOnly` and has no grant on `Secret`; each base has one pair."""
    secret = services.kb_create(name=f"Secret{SECRET}")
    own = services.kb_create(name=f"Own{OWN}", owner=kb_editor)
    read_only = services.kb_create(name=f"ReadOnly{READ_ONLY}")
    services.kb_grant(kb=read_only, user=kb_editor, access=KbAccess.READ)
    for kb, marker in ((secret, SECRET), (own, OWN), (read_only, READ_ONLY)):
        QaPair.objects.create(kb=kb, question=f"问题{marker}", answer=f"答案{marker}")
    client.force_login(kb_editor)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    return client


def test_the_changelist_and_its_filters_name_only_the_bases_the_editor_edits(editor):
    response = editor.get("/admin/curation/qapair/")
    assert response.status_code == 200
    page = response.content.decode()
    assert OWN in page
    assert SECRET not in page and READ_ONLY not in page


def test_the_add_form_offers_only_the_bases_the_editor_edits(editor):
    page = editor.get("/admin/curation/qapair/add/").content.decode()
    assert OWN in page
    assert SECRET not in page and READ_ONLY not in page


def test_a_member_does_not_reach_the_curated_answer_admin(client, member):
    client.force_login(member)
    assert client.get("/admin/curation/qapair/").status_code in (302, 403)

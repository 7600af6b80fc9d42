""""Add to evaluation set" on a chat answer: the question and the cited documents the caller may name, for
editors only, into a chosen set or the base's default one."""
from __future__ import annotations

import pytest
from django.test import Client
from django.utils import translation
from rest_framework.test import APIClient

from chat import services as chat_services
from evals.models import EvalSet
from evals.services import DEFAULT_SET_NAME
from kb import services as kb_services
from kb.models import Document, KbAccess

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(kb_editor, member):
    """HR (edited by eddie, read by alice) and finance (neither), with one document each."""
    hr = kb_services.kb_create(name="HR-answers", description="")
    fin = kb_services.kb_create(name="Fin-answers", description="")
    leave = Document.objects.create(title="休假制度", kb=hr, file_type="md", checksum="a")
    budget = Document.objects.create(title="预算规定", kb=fin, file_type="md", checksum="b")
    kb_services.kb_grant(kb=hr, user=kb_editor, access=KbAccess.EDIT)
    kb_services.kb_grant(kb=hr, user=member, access=KbAccess.READ)
    return {"hr": hr, "fin": fin, "leave": leave, "budget": budget}


def _answer(user, documents: list[Document], *, kb_ids: list[int] | None = None, question: str = "婚假几天？"):
    conversation = chat_services.conversation_start(user=user, question=question)
    chat_services.message_add_question(conversation=conversation, content=question)
    citations = [{"index": n, "chunk_id": str(100 + n), "document_id": d.pk, "document_title": d.title}
                 for n, d in enumerate(documents, 1)]
    return chat_services.message_add_answer(
        conversation=conversation, content="婚假十天[1]", citations=citations,
        retrieval_log={"kb_ids": kb_ids if kb_ids is not None else sorted({d.kb_id for d in documents})})


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


def _default_name() -> str:
    with translation.override("zh-hans"):
        return translation.gettext(DEFAULT_SET_NAME)


def test_an_editor_adds_an_answer_to_the_default_set_of_its_base(world, kb_editor):
    answer = _answer(kb_editor, [world["leave"]])
    response = _client(kb_editor).post("/api/eval/items/from-answer/",
                                       {"message": answer.pk, "answers": [["十天"], ["10天"]]}, format="json")
    assert response.status_code == 201, response.content
    eval_set = EvalSet.objects.get(pk=response.json()["set"]["id"])
    assert (eval_set.kb_id, eval_set.name) == (world["hr"].pk, _default_name())
    item = eval_set.items.get()
    assert (item.question, item.answers, item.documents) == ("婚假几天？", [["十天"], ["10天"]], ["休假制度"])
    again = _client(kb_editor).post("/api/eval/items/from-answer/", {"message": answer.pk}, format="json")
    assert again.json()["set"]["id"] == eval_set.pk and eval_set.items.count() == 2


def test_a_cited_document_of_a_base_the_editor_cannot_read_never_enters_the_item(world, kb_editor, admin_user):
    # The answer was made before a revoke, or cites both bases: only the readable base's document is named.
    answer = _answer(kb_editor, [world["budget"], world["leave"]])
    response = _client(kb_editor).post("/api/eval/items/from-answer/", {"message": answer.pk}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["set"]["kb"] == world["hr"].pk and body["item"]["documents"] == ["休假制度"]
    assert "预算规定" not in str(body) and not EvalSet.objects.filter(kb=world["fin"]).exists()


def test_a_chosen_set_takes_only_the_documents_of_its_own_base(world, kb_editor, admin_user):
    other = kb_services.kb_create(name="Ops-answers", description="")
    kb_services.kb_grant(kb=other, user=kb_editor, access=KbAccess.EDIT)
    chosen = EvalSet.objects.create(kb=other, name="ops")
    answer = _answer(kb_editor, [world["leave"]])
    response = _client(kb_editor).post("/api/eval/items/from-answer/", {"message": answer.pk, "set": chosen.pk},
                                       format="json")
    assert response.status_code == 201, response.content
    assert chosen.items.get().documents == []


def test_readers_other_users_answers_and_sets_of_other_bases_are_refused(world, kb_editor, member):
    mine = _answer(kb_editor, [world["leave"]])
    theirs = _answer(member, [world["leave"]])
    assert _client(member).post("/api/eval/items/from-answer/", {"message": theirs.pk},
                                format="json").status_code == 403
    assert _client(kb_editor).post("/api/eval/items/from-answer/", {"message": theirs.pk},
                                   format="json").status_code == 404
    finance = EvalSet.objects.create(kb=world["fin"], name="finance")
    assert _client(kb_editor).post("/api/eval/items/from-answer/", {"message": mine.pk, "set": finance.pk},
                                   format="json").status_code == 404
    assert not finance.items.exists()


def test_an_answer_that_touched_no_base_the_editor_edits_needs_a_chosen_set(world, kb_editor):
    answer = _answer(kb_editor, [], kb_ids=[world["fin"].pk])
    response = _client(kb_editor).post("/api/eval/items/from-answer/", {"message": answer.pk}, format="json")
    assert response.status_code == 400 and "error" in response.json()
    assert not EvalSet.objects.exists()


def test_bad_expected_answers_are_a_400_naming_the_field(world, kb_editor):
    answer = _answer(kb_editor, [world["leave"]])
    response = _client(kb_editor).post("/api/eval/items/from-answer/", {"message": answer.pk, "answers": "十天"},
                                       format="json")
    assert response.status_code == 400 and "answers" in response.json()["fields"]


def test_the_chat_page_offers_the_action_to_editors_only(world, kb_editor, member):
    def page(user) -> str:
        client = Client()
        client.force_login(user)
        return client.get("/").content.decode()

    assert 'data-can-evaluate="1"' in page(kb_editor)
    assert "data-can-evaluate" not in page(member)

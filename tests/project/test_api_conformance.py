"""Schemathesis over every operation of the published schema: the OpenAPI document is the API's truth.

The run is in-process (Django's WSGI handler, no server) and signed in as a knowledge-base editor who has
data — a base holding an indexed document, a conversation with an answer, a memory — so that `{id}` paths
reach real rows and not only 404s. Each operation gets a few examples per phase (examples, coverage,
fuzzing), which keeps the whole run to about a minute of CPU; the document is indexed only for the
operations that search. DOCMIND_SCHEMATHESIS_EXAMPLES raises the count for a deeper run (20 is the release
check: `DOCMIND_SCHEMATHESIS_EXAMPLES=20 pytest tests/project/test_api_conformance.py`).
"""
from __future__ import annotations

import json
import os
import re

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.specs.openapi.checks import positive_data_acceptance

pytestmark = pytest.mark.django_db(transaction=True)

CHECKS = ["not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_schema_conformance", "negative_data_rejection", "positive_data_acceptance"]
# Examples per operation and phase: a few in CI, more on demand.
EXAMPLES = int(os.environ.get("DOCMIND_SCHEMATHESIS_EXAMPLES", "5"))
CONFIG = schemathesis.Config.from_dict({
    "generation": {"max-examples": EXAMPLES, "mode": "all", "deterministic": True,
                   # No example database: a run leaves nothing in the work tree and repeats exactly.
                   "database": "none"},
    "checks": {"enabled": False, **{name: {"enabled": True} for name in CHECKS}},
    "phases": {"stateful": {"enabled": False}},
})


# Operations whose answers come from the search index; the others need the document's row only, and
# indexing it for every operation would cost most of the run.
SEARCHING = ("POST /api/kb/retrieve/", "POST /api/chat/")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@pytest.fixture
def api_data(request, kb_editor, settings, tmp_path):
    """The editor's base with one document, one answered conversation, one memory, one API key, one session; ids
    by path."""
    from apikeys.services import key_create
    from chat import services as chat_services
    from evals.models import EvalItem, EvalRun, EvalSet, RunStatus
    from kb import services as kb_services
    from kb.ingestion.worker import process_pending_documents
    from memory.models import MemorySource
    from memory.services import memory_save
    from memory.types import MemoryCandidate
    from sso.models import UserSession

    settings.MEDIA_ROOT = tmp_path / "media"
    kb = kb_services.kb_create(name="handbook", owner=kb_editor)
    document, _ = kb_services.document_ingest_text(title="Leave policy", text="Annual leave is fifteen days a year.",
                                                   kb=kb, user=kb_editor)
    if any(f"[{label}]" in request.node.name for label in SEARCHING):
        process_pending_documents()
    conversation = chat_services.conversation_start(user=kb_editor, question="How long is annual leave?")
    chat_services.message_add_question(conversation=conversation, content="How long is annual leave?")
    answer = chat_services.message_add_answer(conversation=conversation, content="Fifteen days [1].")
    api_key = key_create(creator=kb_editor, name="integration", kb_ids=[kb.pk], scope="read").key
    memory = memory_save(user_id=kb_editor.pk, source=MemorySource.USER,
                         candidate=MemoryCandidate(memory_type="fact", content="Works in the Berlin office")).memory
    feedback = _feedback_data(kb, kb_editor, answer)
    eval_set = EvalSet.objects.create(kb=kb, name="leave questions")
    eval_item = EvalItem.objects.create(eval_set=eval_set, question="How long is annual leave?",
                                        answers=[["fifteen"]])
    session = UserSession.objects.create(user=kb_editor, session_key="conformance-session")
    eval_run = EvalRun.objects.create(eval_set=eval_set, total=1, status=RunStatus.SUCCEEDED)
    return {"/api/kbs/": kb.pk, "/api/kb/documents/": document.pk, "/api/conversations/": conversation.pk,
            "/api/messages/": answer.pk, "/api/memories/": memory.pk, "/api/keys/": api_key.pk,
            "grant_id": kb.grants.get().pk, **feedback, "/api/eval/sets/": eval_set.pk, "item_id": eval_item.pk,
            "/api/eval/runs/": eval_run.pk, "/api/me/sessions/": session.pk, "/api/users/": kb_editor.pk}


def _feedback_data(kb, editor, answer) -> dict:
    """A curated answer, an edited chunk of a ready document (with a revision to restore) and a review item."""
    from curation.services import qa_pair_create
    from kb import services as kb_services
    from kb.editing import chunk_edit
    from kb.models import Chunk, ChunkLevel, Document, DocumentStatus
    from review.models import ReviewItem

    pair = qa_pair_create(kb=kb, question="How long is annual leave?", answer="Fifteen days.", author=editor)
    document, _ = kb_services.document_ingest_text(title="Travel policy", text="Economy class for all flights.",
                                                   kb=kb, user=editor)
    Document.objects.filter(pk=document.pk).update(status=DocumentStatus.READY)
    chunk = Chunk.objects.create(document=document, level=ChunkLevel.CHILD, ordinal=0, char_start=0, char_end=30,
                                 content="Economy class for all flights.")
    chunk_edit(chunk=chunk, content="Economy class for flights under six hours.", user=editor)
    item = ReviewItem.objects.create(message=answer, kb=kb, kbs=[kb.pk], reason="low", question="q", answer="a")
    return {"/api/kb/qa-pairs/": pair.pk, "/api/kb/chunks/": chunk.pk,
            "rev": chunk.revisions.order_by("history_id").first().history_id, "/api/reviews/": item.pk}


@pytest.fixture
def api_token(kb_editor) -> str:
    return Token.objects.create(user=kb_editor).key


def _published_schema() -> dict:
    """The document /api/schema/ serves, built the same way (collection needs no database or request)."""
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    return json.loads(OpenApiJsonRenderer().render(SchemaGenerator().get_schema(request=None, public=True)))


schema = schemathesis.openapi.from_dict(_published_schema(), config=CONFIG)


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_every_operation_conforms_to_the_schema(case, api_data, api_token):
    for name, value in (case.path_parameters or {}).items():
        if isinstance(value, int) and value > 0:
            # Positive ids hit the caller's own rows, so detail operations answer more than 404.
            case.path_parameters[name] = api_data.get(name) or next(
                pk for prefix, pk in api_data.items() if case.path.startswith(prefix))
    excluded = []
    if case.operation.label in ("POST /api/kb/documents/", "POST /api/kb/documents/archive/"):
        # Which file types can be read (and so accepted) is not something OpenAPI can state about a binary
        # part, so a schema-valid upload of random bytes (not a document, not a zip) is rightly refused with 400.
        excluded.append(positive_data_acceptance)
    if case.operation.label in ("POST /api/eval/sets/", "POST /api/eval/sets/{id}/items/",
                                "PATCH /api/eval/sets/{id}/items/{item_id}/"):
        # Whether the documents an item names exist in the set's base is not something the schema can state, so
        # a schema-valid item naming a random title is rightly refused with 400.
        excluded.append(positive_data_acceptance)
    if case.operation.label in ("POST /api/kb/qa-pairs/", "PATCH /api/kb/qa-pairs/{id}/"):
        # Whether the documents a curated answer names are documents of its base is not something the schema can
        # state, so a schema-valid pair naming random document ids is rightly refused with 400.
        excluded.append(positive_data_acceptance)
    if case.media_type != "application/json" and isinstance(case.body, dict) and any(
            _CONTROL.search(str(name)) for name in case.body):
        # A form field named with control characters cannot be written in a valid part header or form body;
        # Django's parsers read such a body only in part, so the fields the schema knows may be lost.
        excluded.append(positive_data_acceptance)
    if case.operation.label == "POST /api/chat/" and isinstance(case.body, dict) and (
            case.body.get("regenerate") is True or case.body.get("edit") is True):
        # Whether there is a last question to answer again depends on the conversation, not on the body's
        # shape, so a schema-valid redo of a conversation without one is rightly refused with 400.
        excluded.append(positive_data_acceptance)
    case.call_and_validate(app=WSGIHandler(), headers={"Authorization": f"Token {api_token}"},
                           excluded_checks=excluded)

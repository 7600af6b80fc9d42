"""The chat event contract (chat.event_schema): it names every event type, refuses what it does not describe, and
every kind of turn the pipeline runs sends only events that follow it."""
from __future__ import annotations

import re
import threading

import pytest
from pydantic import ValidationError

from chat import events
from chat.event_schema import PAYLOADS, chat_event_adapter, validate_event
from chat.models import Message, MessageRole
from chat.pipeline import ChatPipeline
from chat.pipeline.payloads import PUBLIC_DONE_NAMES
from docmind.evidence import SNIPPET_CHARS
from tests.chat.chat_helpers import BEARS_TITLE, QUESTION, assert_events_follow_the_contract, by_type, ingest_tiny_kb


def test_every_event_type_the_server_can_send_has_a_payload_model():
    # ChatEvent refuses a type outside EVENT_TYPES, so a new event type is added there: this fails until the
    # contract describes it too.
    assert set(PAYLOADS) == set(events.EVENT_TYPES)


def test_the_union_tells_the_events_apart_by_type():
    schema = chat_event_adapter.json_schema()
    assert schema["discriminator"]["propertyName"] == "type"
    assert set(schema["discriminator"]["mapping"]) == set(events.EVENT_TYPES)


def test_an_event_of_a_type_the_contract_does_not_name_fails():
    with pytest.raises(ValidationError):
        validate_event("reflection", {"text": "x"})


def test_an_event_is_checked_from_the_json_text_that_was_sent():
    event = validate_event("error", '{"code":"busy","message":"wait"}')
    assert (event.type, event.data.code, event.data.message) == ("error", "busy", "wait")


@pytest.mark.parametrize(("kind", "data"), [
    ("token", {"text": "x", "html": "<b>x</b>"}),  # a field the contract does not describe
    ("token", {"text": 5}),  # strict: a number is not text
    ("done", {"answer": "x"}),  # required fields missing
    ("routing", {"mode": "ELSEWHERE", "reason": "", "fallback_note": ""}),
    ("error", {"code": "internal", "message": "x", "conversation_id": None}),  # the wire leaves it out, never null
])
def test_a_payload_outside_the_contract_fails(kind, data):
    with pytest.raises(ValidationError):
        validate_event(kind, data)


def _evidence(content: str, source: str = "KB") -> dict:
    return {"chunk_id": "7", "context": "", "document_id": 1 if source == "KB" else None, "document_title": "t",
            "domain": "", "content": content, "score": 0.5, "source": source, "url": None, "location": None}


def _retrieval(*cards: dict) -> dict:
    return {"kb_chunks": [c for c in cards if c["source"] == "KB"],
            "web_chunks": [c for c in cards if c["source"] == "WEB"],
            "no_evidence": False, "timings_ms": {}, "trace": [], "cached": False}


def test_a_view_only_asker_may_get_no_kb_evidence_beyond_a_snippet():
    longer = _retrieval(_evidence("x" * (SNIPPET_CHARS + 1)))
    validate_event("retrieval", longer)  # a reader of the base gets the longer text
    with pytest.raises(ValidationError, match="snippet"):
        validate_event("retrieval", longer, view_only=True)
    validate_event("retrieval", _retrieval(_evidence("x" * SNIPPET_CHARS), _evidence("y" * 900, source="WEB")),
                   view_only=True)


def _done(**changes) -> dict:
    done = {"answer": "a [1]", "citations": [], "citation_coverage": 1.0, "invalid_refs": [],
            "confidence_score": 0.9, "confidence_band": "high", "low_confidence": False, "truncated": False,
            "conversation_id": 1, "message_id": 3, "question_id": 2, "timings_ms": {"generation": 1.5},
            "trace_id": "", "usage": None}
    return {**done, **{public: done[ours] for public, ours in PUBLIC_DONE_NAMES.items()}, **changes}


def test_a_view_only_asker_may_get_no_reader_link():
    citation = {"index": 1, "chunk_id": "7", "document_id": 1, "document_title": "t", "source": "KB", "url": None,
                "location": None, "reader_url": "/documents/1/?chunk=7#cited"}
    done = _done(citations=[citation])
    validate_event("done", done)
    with pytest.raises(ValidationError, match="reader link"):
        validate_event("done", done, view_only=True)
    validate_event("done", {**done, "citations": [{**citation, "reader_url": None}]}, view_only=True)


@pytest.mark.parametrize(("public", "ours"), list(PUBLIC_DONE_NAMES.items()))
def test_a_done_whose_public_name_and_snake_case_twin_differ_fails(public, ours):
    changed = {"citationCoverage": 0.5, "invalidRefs": [2], "confidenceScore": 0.1, "confidenceBand": "low"}[public]
    validate_event("done", _done())
    with pytest.raises(ValidationError, match=f"{public} must equal {ours}"):
        validate_event("done", _done(**{public: changed}))
    with pytest.raises(ValidationError):
        validate_event("done", {k: v for k, v in _done().items() if k != public})  # the public name is required


def _field_names(schema: dict) -> list[tuple[str, str, dict]]:
    """(model, field, its schema) for every field of every model the event union names."""
    return [(model, name, field) for model, part in schema["$defs"].items()
            for name, field in part.get("properties", {}).items()]


def test_every_field_on_the_wire_is_snake_case_but_the_public_contracts_four_deprecated_names():
    fields = _field_names(chat_event_adapter.json_schema())
    camel = {(model, name) for model, name, _ in fields if re.search(r"[A-Z]", name)}
    assert camel == {("DoneData", public) for public in PUBLIC_DONE_NAMES}
    deprecated = {(model, name): field for model, name, field in fields if field.get("deprecated")}
    assert set(deprecated) == camel
    for (_, public), field in deprecated.items():
        twin = PUBLIC_DONE_NAMES[public]
        assert "public contract" in field["description"] and f"`{twin}`" in field["description"]


# Real turns, offline, over the tiny knowledge base: each path of the pipeline and what shows it was taken.

def _ask(user, message, *, pipeline: ChatPipeline | None = None, cancel: threading.Event | None = None, **kw):
    return list((pipeline or ChatPipeline()).run(user=user, message=message, cancel=cancel or threading.Event(),
                                                 **kw))


def _premise(name: str, turns: list[list[events.ChatEvent]]) -> bool:
    last = turns[-1]
    kinds = [e.type for e in last]
    routing = next((e.data for e in last if e.type == "routing"), {})
    return {
        "knowledge": lambda: "retrieval" in kinds and by_type(last, "done").data["citations"],
        "cache replay": lambda: by_type(last, "start").data["cached"] is True,
        "greeting": lambda: routing.get("mode") == "META",
        "knowledge-base meta": lambda: routing.get("mode") == "META",
        "memory": lambda: routing.get("mode") == "META",
        "selected document": lambda: routing.get("mode") == "SELECTED_DOC",
        "agentic": lambda: routing.get("mode") == "AGENTIC" and ("agentic" in kinds or routing["fallback_note"]),
        "abstention": lambda: by_type(last, "start").data["no_evidence"] is True
        and all(s["related"] for s in by_type(last, "start").data["sources"]),
        "bad input": lambda: kinds == ["error"] and last[0].data["code"] == "empty_message",
    }[name]()


TURNS = {
    "knowledge": [QUESTION],
    "cache replay": [QUESTION, QUESTION],
    "greeting": ["你好"],
    "knowledge-base meta": ["知识库里有哪些文档？"],
    "memory": ["你记得我什么？"],
    "selected document": ["总结一下这篇文档"],
    "agentic": ["对比星河公司的年假天数和报销期限"],
    "abstention": ["公司的股票期权怎么行权？"],
    "bad input": ["   "],
}


@pytest.fixture
def fresh_cache():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("name", list(TURNS))
def test_every_kind_of_turn_sends_only_events_of_the_contract(member, fresh_cache, name):
    from memory.models import UserMemory

    documents = ingest_tiny_kb()
    UserMemory.objects.create(user=member, content="我更喜欢简洁的回答")
    extra = {"document_id": documents[BEARS_TITLE]} if name == "selected document" else {}
    turns = [_ask(member, message, **extra) for message in TURNS[name]]
    for turn in turns:
        assert_events_follow_the_contract(turn)
    assert _premise(name, turns), [e.to_ws() for e in turns[-1]]
    # What the turn saved is read back by the conversation API as it is: snake_case too.
    for answer in Message.objects.filter(conversation__user=member, role=MessageRole.ASSISTANT):
        assert _camel_case_keys(answer.retrieval_log) == [], answer.retrieval_log


def _camel_case_keys(value, path: str = "") -> list[str]:
    """Every camelCase key in a JSON value, by its path; a tool call's arguments are the planner's, not ours."""
    if isinstance(value, list):
        return [found for i, item in enumerate(value) for found in _camel_case_keys(item, f"{path}[{i}]")]
    found = []
    for key, item in value.items() if isinstance(value, dict) else ():
        if re.search(r"[A-Z]", key):
            found.append(f"{path}.{key}")
        if key != "arguments":
            found += _camel_case_keys(item, f"{path}.{key}")
    return found


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_done_gives_the_public_contracts_names_the_values_of_their_snake_case_twins(member, fresh_cache):
    # The one test that reads the public contract's camelCase names: external clients rely on them.
    ingest_tiny_kb()
    done = by_type(_ask(member, QUESTION), "done").data
    assert done["citations"] and done["confidence_band"] and done["confidence_score"] is not None
    assert done["citation_coverage"] is not None
    assert {public: done[public] for public in PUBLIC_DONE_NAMES} == {
        "citationCoverage": done["citation_coverage"], "invalidRefs": done["invalid_refs"],
        "confidenceScore": done["confidence_score"], "confidenceBand": done["confidence_band"]}


def _failing_stages(snapshot, *, kb_ids):
    raise RuntimeError("a stage could not be built")


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_failed_and_cancelled_turns_end_with_an_error_event_of_the_contract(member):
    ingest_tiny_kb()
    failed = _ask(member, QUESTION, pipeline=ChatPipeline(stages_factory=_failing_stages))
    assert assert_events_follow_the_contract(failed) == ["error"]
    error = validate_event("error", failed[-1].data).data
    assert error.code == "internal" and error.message_id and error.conversation_id and error.question_id
    stopped = threading.Event()
    stopped.set()
    cancelled = _ask(member, QUESTION, cancel=stopped)
    assert_events_follow_the_contract(cancelled)
    assert cancelled[-1].data["code"] == "cancelled"

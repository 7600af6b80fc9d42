"""The chat event contract as pydantic models: every event type and the fields its payload carries on the wire.

One event is `{"type": …, "data": {…}}` over the WebSocket and an `event: <type>` line with a `data: <JSON>` line
over SSE (chat.events). Every field name is snake_case but four on `done` that the public contract names in camelCase
(citationCoverage, invalidRefs, confidenceScore, confidenceBand): they are sent beside their snake_case twins, with the
same values, and marked deprecated. Nothing here runs while a turn streams: the tests validate real turns against these
models, and the OpenAPI document publishes them (project.openapi), so a payload that changes without its model fails a
test.

SSE's `: keepalive` comment lines (while the model is silent) are not events and carry nothing.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any, Literal, Union

from pydantic import MISSING, BaseModel, ConfigDict, Field, TypeAdapter, ValidationInfo, create_model, model_validator

from chat import events
from chat.pipeline.payloads import CARD_CHARS, PUBLIC_DONE_NAMES
from chat.types import Complexity, Intent, Mode, Scope, Specificity
from docmind.evidence import SNIPPET_CHARS, Source
from kb.retrieval.types import Grade

# Validation context key: the asker holds only a `view` grant (or an ask-only API key) on the cited bases.
VIEW_ONLY = "view_only"


def _one_of(enum: type[StrEnum], *more: str) -> Any:
    """A Literal of the enum's values (and `more`): the enums stay the one list, the schema shows plain strings."""
    return Literal[(*(member.value for member in enum), *more)]


SourceKind = _one_of(Source)
RouteMode = _one_of(Mode, "META")
AnswerMode = _one_of(Mode, "META", "CURATED", "")
ConfidenceBand = Literal["high", "medium", "low", "none", ""]


class _Payload(BaseModel):
    # Strict and closed: a field the wire gains or changes the type of fails validation until it is described here.
    model_config = ConfigDict(extra="forbid", strict=True)


class _Card(_Payload):
    """A passage of evidence as a card shows it."""

    chunk_id: str = Field(description="The chunk's id: a KB chunk's primary key as text, a web result's hash.")
    document_id: int | None = Field(description="The KB document the chunk belongs to; null for web evidence.")
    document_title: str = Field(description="The document's title, or the web page's.")
    source: SourceKind = Field(description="Where the evidence comes from.")


class EvidenceCard(_Card):
    """One chunk of the turn's evidence, as the asker may receive it."""

    context: str = Field(description="Document title › section path of a KB chunk; empty for web evidence.")
    domain: str = Field(description="The document's domain label.")
    content: str = Field(max_length=CARD_CHARS, description=(
        f"Up to {CARD_CHARS} characters of the chunk's text where the asker may read the original (and for web "
        f"evidence). An asker with only a `view` grant on the chunk's base (or an ask-only API key) receives only "
        f"the chunk's snippet: at most {SNIPPET_CHARS} characters of the passage that matched."))
    score: float = Field(description="The chunk's score after the last stage that scored it.")
    url: str | None = Field(description="The web page's address; null for KB evidence.")
    location: dict[str, Any] | None = Field(description=(
        "Where the chunk is in its original file ({\"page\": 3, \"boxes\": […]}, {\"sheet\": …, \"rows\": […]}, "
        "{\"slide\": 3}); null where the format has no pages, or for web evidence."))

    @model_validator(mode="after")
    def _snippet_for_a_view_grant(self, info: ValidationInfo) -> EvidenceCard:
        if _view_only(info) and self.source == Source.KB and len(self.content) > SNIPPET_CHARS:
            raise ValueError(f"a view-only asker receives at most a {SNIPPET_CHARS}-character snippet")
        return self


class _Linked(_Card):
    reader_url: str | None = Field(description=(
        "The reader at the cited passage, for a KB document whose base the asker may read; null otherwise (a "
        "`view` grant, an ask-only API key, web evidence). Worked out for the asker each time, never stored."))

    @model_validator(mode="after")
    def _no_link_for_a_view_grant(self, info: ValidationInfo) -> _Linked:
        if _view_only(info) and self.reader_url is not None:
            raise ValueError("a view-only asker gets no reader link")
        return self


class SourceCard(_Linked):
    """A source card: what the answer's `[n]` refers to (or, with `related`, a nearby passage of an abstention)."""

    index: int = Field(description="The n of `[n]` in the answer, from 1.")
    chunk_id: str | None = Field(description="The chunk's id; null on a curated answer's card, which names a "
                                             "document only.")
    content: str = Field(max_length=SNIPPET_CHARS, description="The cited snippet; empty on a curated answer's card.")
    score: float = Field(description="The chunk's score.")
    domain: str = Field(description="The document's domain label.")
    location: dict[str, Any] | None = Field(description="Where the passage is in its original file, or null.")
    context: str | MISSING = Field(default=MISSING, description="Title › section path; absent on a curated card.")
    url: str | None | MISSING = Field(default=MISSING, description="The web page's address (null for KB "
                                                                   "evidence); absent on a curated card.")
    revision: int | MISSING = Field(default=MISSING, description=(
        "The revision of the KB chunk that was quoted (0: the text as ingested), so the reader can show it later; "
        "absent on web, curated and cached cards saved before revisions were recorded."))
    related: Literal[True] | MISSING = Field(default=MISSING, description=(
        "Present (true) when the evidence did not answer the question: the card is related, not a citation."))


class CitedSource(_Linked):
    """A source the finished answer cites."""

    index: int = Field(description="The n of `[n]` in the answer.")
    chunk_id: str | None = Field(description="The cited chunk's id; null for a curated answer's document.")
    url: str | None | MISSING = Field(default=MISSING, description="The web page's address (null for KB "
                                                                   "evidence); absent on a curated answer.")
    location: dict[str, Any] | None | MISSING = Field(default=MISSING, description=(
        "Where the cited passage is in its original file (or null); absent on a curated answer."))


class CuratedLabel(_Payload):
    """Who wrote a curated answer and when, so the reader knows it was not generated."""

    id: int = Field(description="The curated question-and-answer pair.")
    author: str = Field(description="The editor's username; empty when the author was deleted.")
    updated_at: str = Field(description="When the pair was last changed (ISO 8601).")
    question: str = Field(description="The curated question this turn matched.")


class ToolCallShown(_Payload):
    id: str = Field(description="The call's id within the turn.")
    name: str = Field(description="The tool the planner called (searchDocs, webSearch, executeCode…).")
    arguments: dict[str, Any] | str = Field(description="The call's arguments; the raw text when not a JSON object.")


class RerankedChunk(_Payload):
    chunk_id: str = Field(description="The chunk's id.")
    document_title: str = Field(description="The document's title, or the web page's.")
    source: SourceKind = Field(description="Where the evidence comes from.")
    score: float = Field(description="The reranker's score (the current score where no reranker ran).")


class TokenUsage(_Payload):
    input_tokens: int = Field(description="Prompt tokens of every model call of the turn.")
    output_tokens: int = Field(description="Completion tokens of every model call of the turn.")
    cost: float | None = Field(description="Their price where every model used has one configured, else null.")


class UnderstandingData(_Payload):
    """How the question was understood: the classifier's verdict and its rewrite."""

    rewritten: str = Field(description="The question made standalone (follow-ups resolved).")
    intent: _one_of(Intent) = Field(description="What kind of answer is asked for.")
    complexity: _one_of(Complexity) = Field(description="How much evidence the answer needs.")
    specificity: _one_of(Specificity) = Field(description="How precisely the question names its subject.")
    time_aware: bool = Field(description="The question depends on the current date.")
    memory_aware: bool = Field(description="The question refers to what the user told the assistant before.")
    is_ambiguous: bool = Field(description="The question could mean several things.")
    scope: _one_of(Scope) = Field(description="KNOWLEDGE retrieves; every other scope is answered without it.")
    scope_confidence: float = Field(description="The classifier's confidence in `scope`, 0–1.")
    memory_write_hints: list[str] = Field(description="Facts about the user worth remembering.")
    source: Literal["meta-rules", "llm", "heuristic"] = Field(description="Which tier decided.")
    resolved: list[str] = Field(description="What the rewrite filled in from the conversation (\"它 → …\").")
    ms: float = Field(description="How long understanding took, in milliseconds.")


class RoutingData(_Payload):
    """Which path answers: a selected document read whole, the rule planner, the agentic loop, or META."""

    mode: RouteMode = Field(description="The path; META for scopes answered without retrieval.")
    reason: str = Field(description="Why this path was chosen.")
    fallback_note: str = Field(description="Why a preferred path was not taken; empty when it was.")


class AgenticData(_Payload):
    """One round of the agentic loop's tool calls (repeated, one per round)."""

    round: int = Field(description="The round, from 1.")
    planner: Literal["llm", "offline"] = Field(description="Who planned the calls.")
    tool_calls: list[ToolCallShown] = Field(description="The calls of this round.")


class CodeExecData(_Payload):
    """One sandboxed code run of the agentic loop (repeated; after every `agentic` event)."""

    code: str = Field(description="The code the planner ran.")
    stdout: str = Field(description="What it printed.")
    stderr: str = Field(description="What it printed as errors.")
    exit_code: int | None = Field(description="Its exit code; null when it was stopped.")
    duration_ms: float = Field(description="How long it ran, in milliseconds.")
    timed_out: bool = Field(description="It was stopped at the sandbox's time limit.")
    truncated: bool = Field(description="Its output was cut at the sandbox's limit.")


class RetrievalData(_Payload):
    """The turn's evidence, as far as the asker may read each original (see `EvidenceCard.content`)."""

    kb_chunks: list[EvidenceCard] = Field(description="Knowledge-base evidence, best first.")
    web_chunks: list[EvidenceCard] = Field(description="Web evidence, best first.")
    no_evidence: bool = Field(description="Nothing was found.")
    timings_ms: dict[str, float] = Field(description="Milliseconds per retrieval stage.")
    trace: list[str] = Field(description="What each stage did, server paths removed.")
    cached: bool = Field(description="The evidence of a semantic-cache hit, replayed.")


class RerankData(_Payload):
    top: list[RerankedChunk] = Field(description="The evidence in its final order with its rerank score.")
    rerank_top1: float = Field(description="The best rerank score.")


class GraderData(_Payload):
    """How well the evidence supports an answer."""

    grade: _one_of(Grade) = Field(description="HIGH, AMBIGUOUS or LOW.")
    rerank_top1: float = Field(description="The best rerank score.")
    lex_coverage: float = Field(description="Share of the question's words the evidence contains, 0–1.")
    kb_entity_weak: bool = Field(description="The question's named entity is missing from the KB evidence.")
    web_compensation_needed: bool = Field(description="The KB evidence is weak enough to search the web.")
    reason: str = Field(description="Why this grade.")


class StartData(_Payload):
    """The answer begins: its source cards and how it will be made."""

    extractive: bool = Field(description="No language model is connected: the answer is quoted from the evidence.")
    model: str = Field(description="The model answering; \"extractive\" or \"curated\" where none does.")
    sources: list[SourceCard] = Field(description="What the answer's `[n]` will refer to; the related passages of "
                                                  "an abstention; empty for scopes answered without retrieval.")
    low_confidence: bool = Field(description="The evidence is weak: the answer is labelled as low relevance.")
    no_evidence: bool = Field(description="The evidence does not answer the question: the answer abstains.")
    cached: bool = Field(description="A semantic-cache hit replays an earlier answer.")
    mode: AnswerMode = Field(description="The route's mode, META, CURATED, or empty for an abstention without one.")
    curated: CuratedLabel | MISSING = Field(default=MISSING, description="Present on an editor's curated answer.")


class TokenData(_Payload):
    text: str = Field(description="The next piece of the answer's text (Markdown), to append.")


def _public_name(twin: str) -> str:
    return f"`{twin}` (the same value) under the public contract's name, kept for existing clients; read `{twin}`."


class DoneData(_Payload):
    """The answer is complete and saved."""

    answer: str = Field(description="The whole answer (Markdown with `[n]` citations); replaces the streamed text.")
    citations: list[CitedSource] = Field(description="The sources the answer cites.")
    citation_coverage: float | None = Field(description="Share of the answer's sentences that cite, 0–1; null where "
                                                        "citations do not apply.")
    invalid_refs: list[int] = Field(description="`[n]` in the answer that name no source.")
    confidence_score: float | None = Field(description="How well the evidence supports the answer, 0–1; null for "
                                                       "scopes answered without retrieval.")
    confidence_band: ConfidenceBand = Field(description="The score's band; empty where there is none.")
    citationCoverage: float | None = Field(deprecated=True, description=_public_name("citation_coverage"))
    invalidRefs: list[int] = Field(deprecated=True, description=_public_name("invalid_refs"))
    confidenceScore: float | None = Field(deprecated=True, description=_public_name("confidence_score"))
    confidenceBand: ConfidenceBand = Field(deprecated=True, description=_public_name("confidence_band"))
    low_confidence: bool = Field(description="The band is low or none: the answer is labelled as low relevance.")
    truncated: bool = Field(description="The model stopped at its length limit: the answer is incomplete.")
    conversation_id: int = Field(description="The conversation the turn belongs to.")
    message_id: int = Field(description="The saved answer.")
    question_id: int = Field(description="The saved question.")
    timings_ms: dict[str, float] = Field(description="Milliseconds per stage of the turn.")
    trace_id: str = Field(description="The turn's OpenTelemetry trace id; empty when tracing is off.")
    usage: TokenUsage | None = Field(description="Tokens and cost of the turn's model calls; null when none ran.")
    curated: CuratedLabel | MISSING = Field(default=MISSING, description="Present on an editor's curated answer.")

    @model_validator(mode="after")
    def _twins_agree(self) -> DoneData:
        for public, ours in PUBLIC_DONE_NAMES.items():
            # Read through __dict__: attribute access to a deprecated field warns.
            if self.__dict__[public] != self.__dict__[ours]:
                raise ValueError(f"{public} must equal {ours}")
        return self


class ErrorData(_Payload):
    """The turn (or the frame) failed; no `done` follows."""

    code: str = Field(description=(
        "What failed: `cancelled`, `llm_timeout`, `llm_unavailable`, `llm_error`, `internal`; before the turn: "
        "`server_busy`, `too_many_turns`, `busy`, `unauthenticated`, `bad_frame`, `frame_too_large` (WebSocket) "
        "and the request's own errors (`empty_message`, `message_too_long`, `conversation_not_found`, "
        "`document_not_found`, `kb_not_found`, `invalid_kb`, `nothing_to_regenerate`…)."))
    message: str = Field(description="What happened, in the asker's language.")
    status: int | MISSING = Field(default=MISSING, description=(
        "The HTTP status the same refusal gets over SSE; present on a WebSocket request's own errors."))
    conversation_id: int | MISSING = Field(default=MISSING, description="Present once the question was saved.")
    question_id: int | MISSING = Field(default=MISSING, description="Present once the question was saved.")
    message_id: int | MISSING = Field(default=MISSING, description="The saved failed answer, when it was saved.")
    trace_id: str | MISSING = Field(default=MISSING, description="The turn's trace id, when tracing is on.")


# Every event type and its payload: a type chat.events can send and that is missing here fails the tests.
PAYLOADS: dict[str, type[_Payload]] = {
    events.UNDERSTANDING: UnderstandingData, events.ROUTING: RoutingData, events.AGENTIC: AgenticData,
    events.CODE_EXEC: CodeExecData, events.RETRIEVAL: RetrievalData, events.RERANK: RerankData,
    events.GRADER: GraderData, events.START: StartData, events.TOKEN: TokenData, events.DONE: DoneData,
    events.ERROR: ErrorData,
}


def _frame(kind: str, payload: type[_Payload]) -> type[BaseModel]:
    return create_model(payload.__name__.removesuffix("Data") + "Event", __config__=_Payload.model_config,
                        __doc__=f"The `{kind}` event.", type=(Literal[kind], ...), data=(payload, ...))


# One event as the WebSocket sends it; over SSE `type` is the `event:` line and `data` the `data:` line.
AnyChatEvent = Annotated[Union[tuple(_frame(kind, payload) for kind, payload in PAYLOADS.items())],  # noqa: UP007
                         Field(discriminator="type")]
chat_event_adapter: TypeAdapter[Any] = TypeAdapter(AnyChatEvent)


def validate_event(kind: str, data: Mapping[str, Any] | str | bytes, *, view_only: bool = False) -> BaseModel:
    """One event checked against the contract: its type and its payload, best as the JSON text that was sent (a
    mapping is checked as it is). Raises pydantic's ValidationError. `view_only` also checks that nothing exceeds
    what an asker with only a `view` grant may receive."""
    payload = json.loads(data) if isinstance(data, str | bytes) else data
    return chat_event_adapter.validate_python({"type": kind, "data": payload}, context={VIEW_ONLY: view_only})


def _view_only(info: ValidationInfo) -> bool:
    return bool(info.context and info.context.get(VIEW_ONLY))

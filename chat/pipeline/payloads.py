"""Event payloads and the persisted retrieval log, built from stage results (no decisions here)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from chat import events
from chat.events import ChatEvent
from chat.types import PathDecision, QueryClassification
from docmind.evidence import SNIPPET_CHARS
from docmind.redact import without_paths
from kb.citation_links import SNIPPET, CitationLinks
from kb.retrieval.types import Evidence, ScoredChunk

CARD_CHARS = 1200

# Four `done` fields keep the camelCase names of the public contract, which external clients read: `done` carries
# each beside its snake_case twin, with the same value. DocMind's own code reads the twins only.
PUBLIC_DONE_NAMES = {"citationCoverage": "citation_coverage", "invalidRefs": "invalid_refs",
                     "confidenceScore": "confidence_score", "confidenceBand": "confidence_band"}


def chunk_card(chunk: ScoredChunk, *, chars: int = CARD_CHARS) -> dict[str, Any]:
    card = chunk.as_dict()
    card["content"] = chunk.content[:chars]
    return card


def source_cards(chunks: Iterable[ScoredChunk]) -> list[dict[str, Any]]:
    """The `[n]` targets in prompt order: source n is the chunk the model saw as [n]."""
    return [{"index": i, **chunk_card(c, chars=SNIPPET_CHARS)} for i, c in enumerate(chunks, start=1)]


def evidence_cards(chunks: Iterable[ScoredChunk], links: CitationLinks) -> list[dict[str, Any]]:
    """Evidence as the trace shows it to this asker: up to CARD_CHARS of each chunk where it may read the
    original, else the chunk's snippet (see kb.citation_links)."""
    chunks = list(chunks)
    links.prefetch_evidence(chunks)
    return [{**chunk.as_dict(), "content": links.quote(chunk, chars=CARD_CHARS)} for chunk in chunks]


def with_reader_links(event: ChatEvent, links: CitationLinks) -> ChatEvent:
    """`start`'s source cards and `done`'s citations with the asker's `reader_url` (see kb.citation_links)."""
    key = {events.START: "sources", events.DONE: "citations"}.get(event.type)
    if key is None or key not in event.data:
        return event
    return ChatEvent(event.type, {**event.data, key: links.apply(event.data[key])})


def messages_with_reader_links(messages: Iterable[Mapping[str, Any]], links: CitationLinks) -> list[dict[str, Any]]:
    """Saved answers read back (citations, and the source cards in their log) with `reader_url` as it is for this
    asker now: saved cards carry none, since a grant may have changed since they were saved. The saved evidence
    likewise gives its text only where the asker may read the original now, else its snippet."""
    messages = [dict(m) for m in messages]
    logs = [m.get("retrieval_log") if isinstance(m.get("retrieval_log"), Mapping) else {} for m in messages]
    links.prefetch([card for m, log in zip(messages, logs, strict=True)
                    for card in [*(m.get("citations") or []), *(log.get("sources") or [])]])
    for message, log in zip(messages, logs, strict=True):
        if isinstance(message.get("citations"), list):
            message["citations"] = links.apply(message["citations"])
        if not log:
            continue
        log = dict(log)
        if isinstance(log.get("sources"), list):
            log["sources"] = links.apply(log["sources"])
        # The saved evidence as this asker may receive it now: its snippet only where it may not read the original.
        for key in ("kb_chunks", "web_chunks"):
            if isinstance(log.get(key), list):
                log[key] = links.quote_saved(log[key])
        message["retrieval_log"] = log
    return messages


def understanding(classification: QueryClassification, ms: float) -> ChatEvent:
    return ChatEvent(events.UNDERSTANDING, {**classification.as_dict(), "source": classification.source,
                                            "resolved": list(classification.resolved), "ms": ms})


def routing(decision: PathDecision) -> ChatEvent:
    return ChatEvent(events.ROUTING, decision.as_dict())


def meta_routing(scope: str) -> ChatEvent:
    return ChatEvent(events.ROUTING, {"mode": "META", "reason": f"scope {scope}: answered without retrieval",
                                      "fallback_note": ""})


def retrieval(evidence: Evidence, *, links: CitationLinks, cached: bool = False) -> ChatEvent:
    """The turn's evidence for the asker's trace: `links` says which originals the asker may read."""
    return ChatEvent(events.RETRIEVAL, {
        "kb_chunks": evidence_cards(evidence.kb_chunks, links),
        "web_chunks": evidence_cards(evidence.web_chunks, links),
        "no_evidence": evidence.needs_fallback,
        "timings_ms": dict(evidence.timings_ms),
        # Stage notes quote backend errors, which may name server files: members get them without paths.
        "trace": [without_paths(note) for note in evidence.trace],
        "cached": cached,
    })


def rerank(evidence: Evidence) -> ChatEvent:
    top = [{"chunk_id": c.chunk_id, "document_title": c.document_title, "source": c.source.value,
            "score": round(float(c.stage_scores.get("rerank", c.score)), 4)} for c in evidence.chunks]
    return ChatEvent(events.RERANK, {"top": top, "rerank_top1": round(evidence.grade.rerank_top1, 4)})


def grader(evidence: Evidence) -> ChatEvent:
    return ChatEvent(events.GRADER, evidence.grade.as_dict())


def related_cards(chunks: Iterable[ScoredChunk]) -> list[dict[str, Any]]:
    """The closest sources of an abstention: shown as related, never as the answer's citations."""
    return [{"index": i, **chunk_card(c, chars=SNIPPET_CHARS), "related": True} for i, c in enumerate(chunks, start=1)]


def start(*, extractive: bool, model: str, sources: list[dict[str, Any]], low_confidence: bool = False,
          no_evidence: bool = False, cached: bool = False, mode: str = "",
          curated: Mapping[str, Any] | None = None) -> ChatEvent:
    data = {"extractive": extractive, "model": "extractive" if extractive else model, "sources": sources,
            "low_confidence": low_confidence, "no_evidence": no_evidence, "cached": cached, "mode": mode}
    if curated is not None:
        # An answer an editor wrote: who and when, so the reader knows it is not generated.
        data["curated"] = dict(curated)
    return ChatEvent(events.START, data)


def token(text: str) -> ChatEvent:
    return ChatEvent(events.TOKEN, {"text": text})


def done(*, answer: str, report: Mapping[str, Any], conversation_id: int, message_id: int,
         question_id: int, timings_ms: Mapping[str, float], trace_id: str = "",
         usage: Mapping[str, Any] | None = None) -> ChatEvent:
    data = {
        "answer": answer,
        "citations": list(report.get("citations", [])),
        "citation_coverage": report.get("citation_coverage"),
        "invalid_refs": list(report.get("invalid_refs", [])),
        "confidence_score": report.get("confidence_score"),
        "confidence_band": report.get("confidence_band", ""),
        # The low-relevance label follows the band, so label, badge and band always agree.
        "low_confidence": report.get("confidence_band") in ("low", "none"),
        # The model stopped at its token limit: the answer is incomplete.
        "truncated": bool(report.get("truncated")),
        "conversation_id": conversation_id,
        "message_id": message_id,
        "question_id": question_id,
        "timings_ms": dict(timings_ms),
        # The OpenTelemetry trace of this turn ("" when tracing is off) and its token usage.
        "trace_id": trace_id,
        "usage": {k: usage[k] for k in ("input_tokens", "output_tokens", "cost")} if usage else None,
        **({"curated": dict(report["curated"])} if report.get("curated") else {}),
    }
    return ChatEvent(events.DONE, {**data, **{public: data[ours] for public, ours in PUBLIC_DONE_NAMES.items()}})


def evidence_log(evidence: Evidence) -> dict[str, Any]:
    """KB and web evidence kept apart, so "answered from the web only" is visible afterwards. Each KB card keeps
    its snippet beside its text: a conversation is read back as its owner's grant is then, not as it was."""
    return {
        "kb_chunks": [{**chunk_card(c, chars=SNIPPET_CHARS), SNIPPET: c.snippet()} for c in evidence.kb_chunks],
        "web_chunks": [chunk_card(c, chars=SNIPPET_CHARS) for c in evidence.web_chunks],
        "grade": evidence.grade.as_dict(),
        "retrieval_timings_ms": dict(evidence.timings_ms),
        "retrieval_trace": list(evidence.trace),
    }

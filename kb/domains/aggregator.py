"""`DomainAggregator`: one domain's `when_to_retrieve` (and a default description) from its documents'."""
from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from docmind.llm.base import ChatModel, LlmError, checked_structured_outputs
from docmind.llm.replies import parse_reply
from docmind.prompts.domain_aggregation import SYSTEM, DomainAggregationReply, user_message
from kb.domains.markup import clean_phrase, clean_tags, strip_markup

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DocSummary:
    title: str
    covers: tuple[str, ...]
    when_to_retrieve: str


@dataclass(frozen=True)
class DomainSummary:
    description: str
    when_to_retrieve: str
    source: str  # "llm", "offline" or "empty"


class DomainAggregator:
    """With a chat model: one JSON call over the documents' lines; any failure → deterministic merge."""

    def __init__(self, *, chat_model: ChatModel | None, model: str, max_docs: int = 40,
                 structured_outputs: str = "auto") -> None:
        if max_docs <= 0:
            raise ValueError("max_docs must be positive")
        self.chat_model = chat_model
        self.model = model
        self.structured_outputs = checked_structured_outputs(structured_outputs)
        self.max_docs = max_docs

    def run(self, *, domain_id: str, docs: Sequence[DocSummary]) -> DomainSummary:
        if not docs:
            return DomainSummary(description="", when_to_retrieve="", source="empty")
        if self.chat_model is not None:
            try:
                return self._by_llm(domain_id, docs[: self.max_docs])
            except (LlmError, ValueError, TypeError) as exc:
                log.warning("domain %s aggregation by LLM failed, merging offline: %s", domain_id, exc)
        return offline_merge(domain_id, docs)

    def _by_llm(self, domain_id: str, docs: Sequence[DocSummary]) -> DomainSummary:
        assert self.chat_model is not None
        messages = [{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": user_message(
                        domain_id=domain_id, docs=[(d.title, d.when_to_retrieve, d.covers) for d in docs])}]
        reply = self.chat_model.complete(messages, model=self.model, temperature=0.0, max_tokens=300,
                                         response_schema=DomainAggregationReply,
                                         structured_outputs=self.structured_outputs)
        data = parse_reply(DomainAggregationReply, reply.content, what="domain reply")
        when = clean_phrase(data.when_to_retrieve)[:500]
        if not when:
            raise ValueError("when_to_retrieve missing")
        return DomainSummary(description=clean_phrase(data.description)[:256], when_to_retrieve=when,
                             source="llm")


def offline_merge(domain_id: str, docs: Sequence[DocSummary]) -> DomainSummary:
    """The scenario tags shared by most documents, in a fixed template (same input → same text).

    Tags are cleaned here too: documents profiled before markup was filtered still carry "##".
    """
    counts = Counter(tag for d in docs for tag in clean_tags(d.covers))
    tags = [tag for tag, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))][:8]
    titles = "、".join(f"《{strip_markup(d.title).strip()}》" for d in sorted(docs, key=lambda d: d.title)[:3])
    topics = "、".join(tags) or titles
    more = f"等 {len(docs)} 篇文档" if len(docs) > 3 else ""
    return DomainSummary(description=f"{domain_id}：{'、'.join(tags[:3]) or titles}"[:256],
                         when_to_retrieve=f"用户问题涉及{topics}时检索（{titles}{more}）；优先检索一次，勿重复",
                         source="offline")

"""`DomainAggregator`: one domain's `when_to_retrieve` (and a default description) from its documents'."""
from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from docmind.llm.base import ChatModel, LlmError
from docmind.llm.replies import json_object_from_reply
from kb.domains.markup import clean_phrase, clean_tags, strip_markup

log = logging.getLogger(__name__)

_SYSTEM = ("你为知识库的一个知识域写检索说明。根据各文档的检索时机，只输出 JSON："
           "{\"description\": \"不超过 30 字的域描述\", \"when_to_retrieve\": \"一两句话：用户问到什么时检索本域；"
           "优先检索一次，勿重复\"}。不要输出其它内容。")


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

    def __init__(self, *, chat_model: ChatModel | None, model: str, max_docs: int = 40) -> None:
        if max_docs <= 0:
            raise ValueError("max_docs must be positive")
        self.chat_model = chat_model
        self.model = model
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
        lines = "\n".join(f"- 《{d.title}》：{d.when_to_retrieve}（场景：{'、'.join(d.covers)}）" for d in docs)
        messages = [{"role": "system", "content": _SYSTEM},
                    {"role": "user", "content": f"知识域：{domain_id}\n文档：\n{lines}"}]
        reply = self.chat_model.complete(messages, model=self.model, temperature=0.0, max_tokens=300)
        data = json_object_from_reply(reply.content)
        when = clean_phrase(str(data.get("when_to_retrieve", "")))[:500]
        if not when:
            raise ValueError("when_to_retrieve missing")
        return DomainSummary(description=clean_phrase(str(data.get("description", "")))[:256], when_to_retrieve=when,
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

"""`DocumentProfiler`: a document's `covers` (scenario tags) and `when_to_retrieve`, by LLM or offline."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from docmind.llm.base import ChatModel, LlmError, checked_structured_outputs
from docmind.llm.replies import parse_reply
from docmind.prompts.domain_profile import SYSTEM, DocumentProfileReply, user_message
from docmind.text import keywords
from kb.domains.markup import clean_phrase, clean_tag, clean_tags, strip_markup

log = logging.getLogger(__name__)

MAX_COVERS = 6
# Markdown headings, 第一章 / 第2节, 1.2. / 3、 and 一、 style numbered headings.
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+|第[一二三四五六七八九十百\d]+[章节部分条]\s*|\d+(?:\.\d+)*[.、]\s*"
                      r"|[一二三四五六七八九十]+、\s*)(.+?)\s*$")


@dataclass(frozen=True)
class DocumentProfile:
    covers: tuple[str, ...]
    when_to_retrieve: str
    source: str  # "llm" or "offline"

    def as_metadata(self) -> dict[str, object]:
        return {"covers": list(self.covers), "when_to_retrieve": self.when_to_retrieve}


class DocumentProfiler:
    """With a chat model: one JSON call; any failure (or no model) → derived from headings and jieba terms."""

    def __init__(self, *, chat_model: ChatModel | None, model: str, max_input_chars: int = 4000,
                 structured_outputs: str = "auto") -> None:
        if max_input_chars <= 0:
            raise ValueError("max_input_chars must be positive")
        self.chat_model = chat_model
        self.model = model
        self.structured_outputs = checked_structured_outputs(structured_outputs)
        self.max_input_chars = max_input_chars

    def run(self, *, title: str, text: str) -> DocumentProfile:
        if self.chat_model is not None:
            try:
                return self._by_llm(title, text)
            except (LlmError, ValueError, TypeError) as exc:
                log.warning("document profile by LLM failed, deriving it offline: %s", exc)
        return offline_profile(title, text)

    def _by_llm(self, title: str, text: str) -> DocumentProfile:
        assert self.chat_model is not None
        messages = [{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": user_message(title=title, text=text[:self.max_input_chars])}]
        reply = self.chat_model.complete(messages, model=self.model, temperature=0.0, max_tokens=300,
                                         response_schema=DocumentProfileReply,
                                         structured_outputs=self.structured_outputs)
        data = parse_reply(DocumentProfileReply, reply.content, what="profile reply")
        covers = clean_tags(data.covers, limit=MAX_COVERS)
        when = clean_phrase(data.when_to_retrieve)[:300]
        if not covers or not when:
            raise ValueError("covers or when_to_retrieve missing")
        return DocumentProfile(covers=covers, when_to_retrieve=when, source="llm")


def offline_profile(title: str, text: str) -> DocumentProfile:
    """Headings first (an author's own scenario names), then the most salient jieba terms.

    Markup never becomes a tag: jieba ranks "##" or "http" as terms of a Markdown text.
    """
    covers: list[str] = []
    for line in text.splitlines()[:400]:
        match = _HEADING.match(line)
        heading = clean_tag(match.group(1)) if match else ""
        if 2 <= len(heading) <= 30 and heading not in covers:
            covers.append(heading)
        if len(covers) >= MAX_COVERS // 2:
            break
    for term in keywords(strip_markup(f"{title}\n{text}"), MAX_COVERS * 3):
        if len(covers) >= MAX_COVERS:
            break
        term = clean_tag(term)
        if term and term not in covers and term not in title:
            covers.append(term)
    title = strip_markup(title).strip()
    topics = "、".join(covers[:4]) or title
    when = f"用户问题涉及《{title}》或{topics}时检索" if title else f"用户问题涉及{topics}时检索"
    return DocumentProfile(covers=tuple(covers), when_to_retrieve=when, source="offline")


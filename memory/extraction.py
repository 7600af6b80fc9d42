"""Extractors: what a user said about themselves in one turn, as memory candidates.

`MemoryExtractor` asks the cheap model for structured memories (with the ids of existing memories
each one contradicts); `ExplicitStatementExtractor` is the offline one and keeps explicit statements
only ("记住……", "remember that …", "我是……/我在……工作", "我更喜欢……/I prefer …"). Neither stores
document content, questions, or anything the user did not say about themselves.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from docmind.llm.base import ChatModel, LlmError, checked_structured_outputs
from docmind.llm.replies import parse_reply
from docmind.prompts.memory_extraction import (
    MAX_CONTENT_CHARS,
    SYSTEM_PROMPT,
    MemoryExtractionReply,
    user_message,
)
from memory.style import parse_answer_style
from memory.types import TYPES, MemoryCandidate, MemoryItem

log = logging.getLogger(__name__)

MAX_CANDIDATES = 3
MAX_CHARS = MAX_CONTENT_CHARS
_CLAUSE = re.compile(r"[^。！？!?；;\n.，,]+[。！？!?；;.，,]?")
_QUESTION = re.compile(r"[?？]|(?:吗|呢|么)[。.]?$|什么|怎么|怎样|如何|哪|谁|多少|是否|能否|为什么|"
                       r"^(?:how|what|why|where|when|which|who|can|could|should|is|are|do|does)\b", re.I)
_REMEMBER = re.compile(r"记住|记得|\bremember\b", re.I)
_FIRST_PERSON = re.compile(r"^(?:我|本人)|\b(?:i|i'm|i am|my|me)\b", re.I)
_IMPERATIVE = re.compile(r"^(?:请|以后|今后|每次|总是|一律|always|please|from now on)|"
                         r"(?:回答|回复)(?:时|的时候)?(?:请|要|都)", re.I)
_PROFILE = re.compile(r"我(?:叫|是|的名字是|的职位是|的工作是)|我(?:住在|来自|从事|负责)|"
                      r"我(?:现在|目前|已经|正)?在.{1,20}?(?:工作|上班|任职|就职|负责|做|从事|当|担任)|"
                      r"\b(?:my name is|i am an? |i'm an? |i (?:now |currently )?(?:work|live) (?:at|for|in|as)|"
                      r"i come from)", re.I)
_PREFERENCE = re.compile(r"喜欢|偏好|偏爱|习惯|倾向|讨厌|不喜欢|\b(?:prefer|like|love|hate|dislike|favou?rite)\b", re.I)
_PREFIX = re.compile(r"^(?:请你?|麻烦你?)?(?:帮我)?(?:记住|记一下|记得)(?:[,，:：\s]*)(?:一下|这件事|这个)?[,，:：\s]*|"
                     r"^(?:please\s+)?remember(?:\s+that)?\s+", re.I)


# Slots an explicit statement fills; a new value for the same slot replaces the old statement, which
# embeddings alone may miss ("我现在在深圳工作" after "我在上海工作" is a change, not a second fact).
SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("workplace", re.compile(r"我(?:现在|目前|已经|正)?(?:改|调|换)?(?:到|在)(.{1,20}?)(?:工作|上班|任职|就职)|"
                             r"\bi (?:now |currently )?work (?:at|in|for) (.+)", re.I)),
    ("home", re.compile(r"我(?:现在|目前)?(?:住在|搬到了?)(.{1,20})|\bi (?:now |currently )?live in (.+)", re.I)),
    ("name", re.compile(r"我(?:的名字)?叫(.{1,20})|\bmy name is (.+)", re.I)),
    ("job", re.compile(r"我(?:现在|目前)?是一[名位个](.{1,20})|\bi(?: am|'m) (?:now )?an? (.+)", re.I)),
    ("pet", re.compile(r"我的(猫|狗|宠物)(?:现在)?(?:改名)?叫(.{1,20})|"
                       r"\bmy (cat|dog|pet) is (?:now )?called (.+)", re.I)),
    ("answer_length", re.compile(r"(简洁|简短|详细|详尽).{0,4}(?:回答|回复)|\b(short|brief|concise|detailed) "
                                 r"(?:answers|replies)", re.I)),
)


def slot_of(text: str) -> tuple[str, str] | None:
    """(slot, key within the slot) of a statement: pets are keyed by animal, the rest by slot alone."""
    for name, pattern in SLOTS:
        found = pattern.search(text)
        if found:
            groups = [g for g in found.groups() if g]
            key = groups[0].lower() if name == "pet" and len(groups) > 1 else ""
            return name, key
    return None


def classify(text: str) -> str:
    """The memory type of an explicit statement."""
    if parse_answer_style([text]).applies and _IMPERATIVE.search(text):
        return "instruction"
    if _PREFERENCE.search(text):
        return "preference"
    if _PROFILE.search(text):
        return "profile"
    if _IMPERATIVE.search(text):
        return "instruction"
    return "fact"


def _sentence_of(message: str, hint: str) -> str:
    for sentence in _CLAUSE.findall(message):
        if hint in sentence:
            return sentence.strip()
    return message


class ExplicitStatementExtractor:
    """Offline: the understanding step's memory_write_hints, kept only when they are statements about the
    user (first person, or an instruction about answers, or asked to be remembered) and not questions."""

    def run(self, *, message: str, hints: Sequence[str], existing: Sequence[MemoryItem] = ()) -> list[MemoryCandidate]:
        out: list[MemoryCandidate] = []
        for hint in hints:
            sentence = _sentence_of(message, hint)
            asked = bool(_REMEMBER.search(sentence))
            text = _PREFIX.sub("", hint.strip()).strip(" ，,。.!！")
            if not 2 <= len(text) <= MAX_CHARS or (_QUESTION.search(sentence) and not asked):
                continue
            if _QUESTION.search(text):
                continue
            if not (_FIRST_PERSON.search(text) or _IMPERATIVE.search(text) or asked):
                continue
            if text not in {c.content for c in out}:
                slot = slot_of(text)
                replaced = tuple(m.id for m in existing if slot is not None and m.content != text
                                 and slot_of(m.content) == slot)
                out.append(MemoryCandidate(memory_type=classify(text), content=text, supersedes=replaced))
        return out[:MAX_CANDIDATES]


class MemoryExtractor:
    """The cheap model (memory.extract_model), its reply read by MemoryExtractionReply; raises LlmError or
    ValueError when the reply is unusable, so the caller can fall back to the explicit extractor."""

    def __init__(self, *, chat_model: ChatModel, model: str, max_existing: int = 30,
                 structured_outputs: str = "auto") -> None:
        if not model:
            raise ValueError("model name is required")
        self.chat_model, self.model, self.max_existing = chat_model, model, max_existing
        self.structured_outputs = checked_structured_outputs(structured_outputs)

    def run(self, *, message: str, existing: Sequence[MemoryItem]) -> list[MemoryCandidate]:
        known = [{"id": m.id, "type": m.memory_type, "content": m.content} for m in existing[: self.max_existing]]
        user = user_message(existing=known, message=message)
        reply = self.chat_model.complete([{"role": "system", "content": SYSTEM_PROMPT},
                                          {"role": "user", "content": user}],
                                         model=self.model, temperature=0.0, max_tokens=400,
                                         response_schema=MemoryExtractionReply,
                                         structured_outputs=self.structured_outputs)
        parsed = parse_reply(MemoryExtractionReply, reply.content, what="extractor reply")
        ids = {m.id for m in existing}
        out: list[MemoryCandidate] = []
        for item in parsed.memories:
            kind = item.type.strip().lower()
            text = item.content.strip()
            if kind not in TYPES or not text or text in {c.content for c in out}:
                continue
            # Only ids the model was shown: it cannot reach another user's memories, or invent ids.
            out.append(MemoryCandidate(memory_type=kind, content=text,
                                       supersedes=tuple(i for i in item.supersedes if i in ids)))
        return out[:MAX_CANDIDATES]


def extract(*, message: str, hints: Sequence[str], existing: Sequence[MemoryItem],
            model: MemoryExtractor | None) -> tuple[list[MemoryCandidate], str]:
    """Candidates and which extractor produced them ("model", "explicit", "explicit (model failed)")."""
    if model is not None:
        try:
            return model.run(message=message, existing=existing), "model"
        except (LlmError, ValueError) as exc:
            log.warning("memory extractor fell back to explicit statements: %s", exc)
            return (ExplicitStatementExtractor().run(message=message, hints=hints, existing=existing),
                    "explicit (model failed)")
    return ExplicitStatementExtractor().run(message=message, hints=hints, existing=existing), "explicit"

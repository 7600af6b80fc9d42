"""`ExtractiveAnswerer`: the offline answer — evidence sentences that best match the question, each cited."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from chat.citations import REF, split_sentences
from chat.generation.language import is_chinese
from docmind.text import ANSWER_STOP_WORDS, char_bigrams, words
from kb.retrieval.types import ScoredChunk
from memory.style import AnswerStyle

LEAD_ZH = "以下内容摘自知识库（离线抽取模式）："
LEAD_EN = "The following is quoted from the knowledge base (offline extractive mode):"
LEAD_LOW_ZH = "以下内容摘自知识库（离线抽取模式），与问题的相关性偏低，请谨慎参考："
LEAD_LOW_EN = ("The following is quoted from the knowledge base (offline extractive mode); "
               "it matches the question only weakly, so please verify it:")
NO_EVIDENCE_ZH = "知识库中没有找到与这个问题相关的内容。可以换个问法，或上传相关文档后再试。"
NO_EVIDENCE_EN = ("I found nothing in the knowledge base about this question. "
                  "Try rephrasing it, or upload a relevant document.")

_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_LATIN_WORD = re.compile(r"[a-z0-9]+(?:[.\-][a-z0-9]+)*")
_MARKUP = re.compile(r"^[\s#>*\-•|]+")
# Sentences shorter than this (meaningful characters) are headings or fragments, not answers.
MIN_SENTENCE_CHARS = 6
_BREAKS = re.compile(r"[。！？!?；;\n]+")
SHORT_SENTENCES = 2
DETAILED_SENTENCES = 8
_STYLE_ZH = {"short": "简洁回答", "detailed": "详细回答", "en": "用英文回答（引文保持原文语言）", "zh": "用中文回答"}
_STYLE_EN = {"short": "short answers", "detailed": "detailed answers",
             "en": "answers in English (quotes stay in the documents' language)", "zh": "answers in Chinese"}


def memory_note(style: AnswerStyle | None, applied: Sequence[str], zh: bool) -> str:
    """Says which remembered preference shaped the answer, and which remembered facts a personal question used.

    Each note is one parenthesised aside without sentence breaks, so citation coverage (which counts
    claims) does not mistake it for an uncited claim."""
    parts: list[str] = []
    if style is not None and style.applies:
        names = _STYLE_ZH if zh else _STYLE_EN
        wanted = [names[v] for v in (style.brevity, style.language) if v]
        quoted = "、".join(f"“{_aside(s)}”" for s in style.sources)
        parts.append(f"（已按你记住的偏好作答：{'、'.join(wanted)}，来自记忆{quoted}）" if zh else
                     f"(Applied your remembered preference: {' and '.join(wanted)}, from memory {quoted})")
    facts = [_aside(a) for a in applied if style is None or a not in style.sources]
    if facts:
        parts.append(f"（结合你的情况，我记得：{'、'.join(facts)}，以上摘录未据此改写）" if zh else
                     f"(About your situation I remember: {' / '.join(facts)} — the quotes above are not adapted to it)")
    return "\n\n" + "\n".join(parts) if parts else ""


def _aside(text: str) -> str:
    return _BREAKS.sub(" ", text).strip()


def terms(text: str) -> dict[str, float]:
    """Weighted match terms: jieba words (1.0) and CJK character bigrams (0.5), stop words dropped."""
    lowered = text.lower()
    found: dict[str, float] = {}
    # Accurate mode, not the search-mode `tokens`: its sub-words (泡泡 in 泡泡堂) would weigh one match twice.
    for word in words(lowered):
        word = word.strip()
        if word and word not in ANSWER_STOP_WORDS and (len(word) > 1 or _CJK_RUN.fullmatch(word) is None
                                                       and word.isalnum()):
            found[word] = 1.0
    for word in _LATIN_WORD.findall(lowered):
        if word not in ANSWER_STOP_WORDS:
            found.setdefault(word, 1.0)
    for run in _CJK_RUN.findall(lowered):
        # Bigrams catch matches jieba splits differently in question and evidence.
        for gram in char_bigrams(run):
            found.setdefault(gram, 0.5)
    return found


def _cited(text: str, index: int) -> str:
    # Chinese punctuation takes the marker directly; Latin text reads better with a space.
    return f"{text}[{index}]" if _CJK_RUN.search(text[-2:]) or text.endswith(("。", "！", "？", "；")) \
        else f"{text} [{index}]"


@dataclass(frozen=True)
class _Candidate:
    chunk_index: int  # 1-based, the [n] of the prompt
    position: int
    text: str
    score: float


class ExtractiveAnswerer:
    """Never writes a claim of its own: every sentence is copied from the evidence and cited."""

    def __init__(self, *, max_sentences: int = 5, min_overlap: float = 0.12) -> None:
        if max_sentences <= 0:
            raise ValueError("max_sentences must be positive")
        if not 0 <= min_overlap <= 1:
            raise ValueError("min_overlap must be within [0, 1]")
        self.max_sentences = max_sentences
        self.min_overlap = min_overlap

    def run(self, *, question: str, chunks: Sequence[ScoredChunk], low_confidence: bool = False,
            style: AnswerStyle | None = None, applied: Sequence[str] = ()) -> str:
        """`style` (remembered language / brevity preferences) and `applied` (remembered facts behind a
        memory-aware question) are applied and named in the answer, never presented as evidence."""
        zh = is_chinese(question) if style is None or style.language is None else style.language == "zh"
        candidates = self._candidates(question, chunks)
        if not candidates:
            return (NO_EVIDENCE_ZH if zh else NO_EVIDENCE_EN) + memory_note(style, applied, zh)
        limit = self.max_sentences
        if style is not None and style.brevity == "short":
            limit = min(limit, SHORT_SENTENCES)
        elif style is not None and style.brevity == "detailed":
            limit = max(limit, DETAILED_SENTENCES)
        ranked = sorted(candidates, key=lambda c: (-c.score, c.chunk_index, c.position))
        picked = [c for c in ranked if c.score >= self.min_overlap][:limit]
        if not picked:
            # Retrieval chose these chunks although the words differ: quote the best chunk's opening.
            picked = [c for c in candidates if c.chunk_index == ranked[0].chunk_index][:2]
        picked.sort(key=lambda c: (c.chunk_index, c.position))  # document order reads naturally
        lead = (LEAD_LOW_ZH if zh else LEAD_LOW_EN) if low_confidence else (LEAD_ZH if zh else LEAD_EN)
        body = "\n".join(f"- {_cited(c.text, c.chunk_index)}" for c in picked)
        return lead + "\n\n" + body + memory_note(style, applied, zh)

    def _candidates(self, question: str, chunks: Sequence[ScoredChunk]) -> list[_Candidate]:
        wanted = terms(question)
        total = sum(wanted.values()) or 1.0
        seen: set[str] = set()
        out: list[_Candidate] = []
        for index, chunk in enumerate(chunks, start=1):
            for position, raw in enumerate(split_sentences(chunk.content)):
                # Strip list/heading markup and any [n] the source text had: they'd read as our citations.
                text = REF.sub("", _MARKUP.sub("", raw)).strip()
                key = re.sub(r"\W", "", text.lower())
                if len(key) < MIN_SENTENCE_CHARS or key in seen:
                    continue
                seen.add(key)
                have = terms(text)
                overlap = sum(w for t, w in wanted.items() if t in have) / total
                # A small rank prior breaks ties in favour of the better-ranked chunk.
                out.append(_Candidate(index, position, text, overlap + 0.01 / index))
        return out

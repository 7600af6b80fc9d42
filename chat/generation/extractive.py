"""`ExtractiveAnswerer`: the offline answer — evidence sentences that answer the question, each cited.

Shaped by what was asked: facts (the best sentences), a comparison (one section per side), how-to (the
source's numbered steps in order) or the summary of a selected document (each section's lead sentence).
Headings, titles and sentences from chunks far below the best one are never quoted.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from chat.citations import REF, split_sentences
from chat.types import AnswerShape
from docmind.language import is_chinese
from docmind.text import ANSWER_STOP_WORDS, char_bigrams, coverage, salient_terms, words
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
_HEADING = re.compile(r"^\s*#{1,6}\s")
_STEP = re.compile(r"^\s*(\d{1,2})[.)、．]\s*(\S.*)$")
_NON_WORD = re.compile(r"\W+")
# A sentence that opens by pointing back ("因此…", "他在…", "These…") leans on the one before it: the cause, the
# subject or the list it continues. Quoting it without that sentence drops what it refers to.
_POINTS_BACK = re.compile(r"^(?:因此|因而|所以|故|于是|从而|由此|这|此|该|其|它|牠|他|她|彼|并|且|而|但|然而|"
                          r"不过|此外|另外|同时|后来|之后|随后|最终|其中|包括|例如|如|即|亦|也|又|还|"
                          r"(?:this|these|that|those|it|its|they|their|he|she|his|her|so|thus|therefore|hence|"
                          r"however|but|also|then|later)\b)", re.IGNORECASE)
# How many neighbouring sentences one quoted sentence may pull in through such references.
CONTINUATION = 2
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


def _passages(picked: Sequence[_Candidate]) -> list[tuple[str, int]]:
    """Sentences that follow each other in one chunk are quoted as one passage with one citation, so a
    quote reads as the source wrote it."""
    runs: list[list[_Candidate]] = []
    for c in picked:
        if runs and runs[-1][-1].chunk_index == c.chunk_index and runs[-1][-1].position + 1 == c.position:
            runs[-1].append(c)
        else:
            runs.append([c])
    out = []
    for run in runs:
        text = run[0].text
        for c in run[1:]:
            text += c.text if _CJK_RUN.search(text[-1:]) or text.endswith(("。", "！", "？", "；")) else f" {c.text}"
        out.append((text, run[0].chunk_index))
    return out


def _key(text: str) -> str:
    return _NON_WORD.sub("", text.lower())


def _labels(chunk: ScoredChunk) -> set[str]:
    """Keys of the texts that only name things: the document title and the section path."""
    parts = [chunk.document_title, *chunk.context.split("›")]
    return {_key(p) for p in parts if _key(p)}


def named_by(chunk: ScoredChunk) -> str:
    return chunk.context if chunk.document_title in chunk.context else f"{chunk.document_title} {chunk.context}"


def beyond_context(wanted: dict[str, float], chunk: ScoredChunk) -> dict[str, float] | None:
    """The question's terms that the chunk's title and heading do not already name; None when nothing
    but character pairs is left ("是什么" → 是什, 什么): the question asks about what they name."""
    named = terms(named_by(chunk))
    rest = {t: w for t, w in wanted.items() if t not in named}
    return rest if sum(rest.values()) >= 1.0 else None


def _rerank(chunk: ScoredChunk) -> float:
    return float(chunk.stage_scores.get("rerank", chunk.score))


def overlap(wanted: dict[str, float], text: str) -> float:
    """Weighted share of the question's terms that `text` contains, in [0, 1]."""
    total = sum(wanted.values())
    if not total:
        return 0.0
    have = terms(text)
    return sum(w for t, w in wanted.items() if t in have) / total


class ExtractiveAnswerer:
    """Never writes a claim of its own: every sentence is copied from the evidence and cited."""

    def __init__(self, *, max_sentences: int = 5, min_overlap: float = 0.12, chunk_floor: float = 0.5,
                 sentence_floor: float = 0.5, summary_sentences: int = 8) -> None:
        if max_sentences <= 0 or summary_sentences <= 0:
            raise ValueError("max_sentences and summary_sentences must be positive")
        for name, value in (("min_overlap", min_overlap), ("chunk_floor", chunk_floor),
                            ("sentence_floor", sentence_floor)):
            if not 0 <= value <= 1:
                raise ValueError(f"{name} must be within [0, 1]")
        self.max_sentences = max_sentences
        self.min_overlap = min_overlap
        # Chunks scoring below this share of the best chunk's rerank score are not quoted.
        self.chunk_floor = chunk_floor
        # Sentences matching the question less than this share of the best sentence are padding.
        self.sentence_floor = sentence_floor
        self.summary_sentences = summary_sentences

    def run(self, *, question: str, chunks: Sequence[ScoredChunk], low_confidence: bool = False,
            shape: AnswerShape = AnswerShape.FACTS, sides: Sequence[str] = (),
            style: AnswerStyle | None = None, applied: Sequence[str] = ()) -> str:
        """`style` (remembered language / brevity preferences) and `applied` (remembered facts behind a
        memory-aware question) are applied and named in the answer, never presented as evidence."""
        zh = is_chinese(question) if style is None or style.language is None else style.language == "zh"
        limit = self.max_sentences
        if style is not None and style.brevity == "short":
            limit = min(limit, SHORT_SENTENCES)
        elif style is not None and style.brevity == "detailed":
            limit = max(limit, DETAILED_SENTENCES)
        lead = (LEAD_LOW_ZH if zh else LEAD_LOW_EN) if low_confidence else (LEAD_ZH if zh else LEAD_EN)
        body = ""
        if shape is AnswerShape.SUMMARY:
            body = self._summary(chunks)
        elif shape is AnswerShape.COMPARISON and len(sides) >= 2:
            body = self._comparison(question, chunks, sides, zh)
        elif shape is AnswerShape.STEPS:
            body = self._steps(question, chunks)
        if not body:
            body = self._facts(question, chunks, limit)
        if not body:
            return (NO_EVIDENCE_ZH if zh else NO_EVIDENCE_EN) + memory_note(style, applied, zh)
        return lead + "\n\n" + body + memory_note(style, applied, zh)

    # ------------------------------------------------------------------ shapes
    def _facts(self, question: str, chunks: Sequence[ScoredChunk], limit: int) -> str:
        picked = self._best(question, self._relevant(chunks, question), limit)
        return "\n".join(f"- {_cited(text, index)}" for text, index in _passages(picked))

    def _comparison(self, question: str, chunks: Sequence[ScoredChunk], sides: Sequence[str], zh: bool) -> str:
        # A chunk is evidence for the side(s) it names best (title or section first, else its text): a passage
        # about 重复扣款 that mentions 退款 in passing belongs to 重复扣款; no sentence is quoted for two sides.
        # A side named by the chunk's title or section owns it outright.
        owners: dict[int, set[int]] = {}
        for i, c in enumerate(chunks, start=1):
            named = [overlap(terms(side), named_by(c)) for side in sides]
            fit = named if max(named) >= 0.5 else [overlap(terms(side), c.searchable_text) for side in sides]
            owners[i] = {k for k, f in enumerate(fit) if f >= 0.5 and f >= max(fit) - 1e-9}
        quoted: set[str] = set()
        sections = []
        for k, side in enumerate(sides):
            own = [(i, c) for i, c in enumerate(chunks, start=1) if k in owners[i]]
            picked = self._best(side, own, max(2, self.max_sentences // 2), exclude=quoted)
            quoted.update(_key(c.text) for c in picked)
            lines = [f"- {_cited(text, index)}" for text, index in _passages(picked)]
            if not lines:
                lines = [f"- 知识库中没有找到关于“{side}”的内容。" if zh else
                         f"- The knowledge base has nothing about \"{side}\"."]
            sections.append(f"**{side}**\n" + "\n".join(lines))
        return "\n\n".join(sections)

    def _steps(self, question: str, chunks: Sequence[ScoredChunk]) -> str:
        wanted = terms(question)
        best: tuple[float, int, list[tuple[str, str]]] | None = None
        for index, chunk in self._relevant(chunks, question):
            steps = [(m.group(1), REF.sub("", m.group(2)).strip()) for m in map(_STEP.match, chunk.content.splitlines())
                     if m]
            if len(steps) < 2:
                continue
            fit = overlap(wanted, chunk.searchable_text) + 0.01 / index
            if best is None or fit > best[0]:
                best = (fit, index, steps)
        if best is None:
            return ""
        _, index, steps = best
        return "\n".join(f"{number}. {_cited(text.rstrip('；;'), index)}" for number, text in steps[:12])

    def _summary(self, chunks: Sequence[ScoredChunk]) -> str:
        """Each part's leading sentence (then its second, while there is room), in document order."""
        per_part: list[list[_Candidate]] = []
        seen: set[str] = set()
        for index, chunk in enumerate(chunks, start=1):
            per_part.append(list(self._sentences(index, chunk, seen)))
        picked: list[_Candidate] = []
        for rank in range(3):
            for part in per_part:
                if rank < len(part) and len(picked) < self.summary_sentences:
                    picked.append(part[rank])
        picked.sort(key=lambda c: (c.chunk_index, c.position))
        return "\n".join(f"- {_cited(c.text, c.chunk_index)}" for c in picked)

    # ------------------------------------------------------------------ helpers
    def _relevant(self, chunks: Sequence[ScoredChunk], question: str = "") -> list[tuple[int, ScoredChunk]]:
        """Chunks near the best one's rerank score and, when some chunk names what the question is about
        (its rare terms: names, codes), only chunks that name it too."""
        indexed = list(enumerate(chunks, start=1))
        if not indexed:
            return []
        top = max(_rerank(c) for _, c in indexed)
        if top > 0:
            indexed = [(i, c) for i, c in indexed if _rerank(c) >= self.chunk_floor * top]
        entities = tuple(t for t in salient_terms(question) if t.rare and len(t.text) >= 2) if question else ()
        if entities:
            named = {i: coverage(entities, c.searchable_text) for i, c in indexed}
            best = max(named.values(), default=0.0)
            if best > 0:
                indexed = [(i, c) for i, c in indexed if named[i] >= 0.5 * best]
        return indexed

    def _best(self, question: str, chunks: Sequence[tuple[int, ScoredChunk]], limit: int,
              exclude: set[str] | None = None) -> list[_Candidate]:
        wanted = terms(question)
        # Sentences already quoted elsewhere in the answer count as seen.
        seen = set(exclude or ())
        # Every sentence of a section is about what its title and heading name, so a sentence is matched
        # against the rest of the question (a sentence that merely repeats the title does not outrank the
        # answer), weighted by how much of the question the chunk's title and heading name (relative to the
        # best chunk): a sentence from a document the question is not about counts a quarter.
        named = {index: overlap(wanted, named_by(chunk)) for index, chunk in chunks}
        top_named = max(named.values(), default=0.0)
        candidates = []
        for index, chunk in chunks:
            weight = max(0.25, named[index] / top_named) if top_named > 0 else 1.0
            rest = beyond_context(wanted, chunk)
            sentences = self._sentences(index, chunk, seen)
            if rest is None:
                # The title and heading name the whole question ("扣款无回调呢？", "X 是什么？"): the section
                # is the answer, and its opening says most about it.
                scores = [named[index] * weight / (1 + k) for k in range(len(sentences))]
            else:
                scores = [overlap(rest, c.text) * weight for c in sentences]
            # A small rank prior breaks ties in favour of the better-ranked chunk.
            candidates += [replace(c, score=score + 0.01 / c.chunk_index)
                           for c, score in zip(sentences, scores, strict=True)]
        if not candidates:
            return []
        ranked = sorted(candidates, key=lambda c: (-c.score, c.chunk_index, c.position))
        floor = max(self.min_overlap, self.sentence_floor * ranked[0].score)
        picked = [c for c in ranked if c.score >= floor][:limit]
        first = min(c.chunk_index for c in candidates)
        if not picked:
            # Retrieval chose these chunks although the words differ: quote the best-ranked chunk's opening.
            picked = [c for c in candidates if c.chunk_index == first][:2]
        if all(c.chunk_index != first for c in picked):
            # The best-ranked evidence is always heard: its best sentence joins the answer.
            own = [c for c in ranked if c.chunk_index == first]
            if own:
                picked = [*picked[:limit - 1], own[0]]
        picked = self._with_references(picked, candidates, limit)
        picked.sort(key=lambda c: (c.chunk_index, c.position))  # document order reads naturally
        return picked

    @staticmethod
    def _with_references(picked: list[_Candidate], candidates: Sequence[_Candidate], limit: int) -> list[_Candidate]:
        """Adds the sentences a quoted sentence cannot be read without: the one before it when it opens by
        pointing back, and the ones after it that open by pointing back at it (its continuation)."""
        at = {(c.chunk_index, c.position): c for c in candidates}
        have = {(c.chunk_index, c.position) for c in picked}
        out = list(picked)
        for c in picked:
            if len(out) >= limit + CONTINUATION:
                break
            position = c.position
            while _POINTS_BACK.match(at[(c.chunk_index, position)].text) and position - c.position > -CONTINUATION:
                before = at.get((c.chunk_index, position - 1))
                if before is None:
                    break
                position -= 1
                if (c.chunk_index, position) not in have:
                    have.add((c.chunk_index, position))
                    out.append(before)
            position = c.position
            while position - c.position < CONTINUATION:
                after = at.get((c.chunk_index, position + 1))
                if after is None or not _POINTS_BACK.match(after.text):
                    break
                position += 1
                if (c.chunk_index, position) not in have:
                    have.add((c.chunk_index, position))
                    out.append(after)
        return out

    @staticmethod
    def _sentences(index: int, chunk: ScoredChunk, seen: set[str]) -> list[_Candidate]:
        labels = _labels(chunk)
        out = []
        for position, raw in enumerate(split_sentences(chunk.content, clauses=False)):
            if _HEADING.match(raw):
                continue
            # Strip list/heading markup and any [n] the source text had: they'd read as our citations.
            text = REF.sub("", _MARKUP.sub("", raw)).strip()
            key = _key(text)
            # Lead-ins ("用户反馈退款未到账时：") introduce what follows; they say nothing on their own.
            if len(key) < MIN_SENTENCE_CHARS or key in seen or key in labels or text.endswith((":", "：")):
                continue
            seen.add(key)
            out.append(_Candidate(index, position, text, 0.0))
        return out

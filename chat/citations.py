"""`CitationParser`: `[n]` markers → structured citations, sentence coverage and confidence (no LLM)."""
from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from chat.types import Citation, CitationReport
from kb.ingestion.locations import cited_location, quoted_from, rank_quotes
from kb.retrieval.types import Grade, GradeResult, ScoredChunk

logger = logging.getLogger(__name__)

# [1], [1][2], [1,2], [1, 2], [1、2], full-width commas too.
REF = re.compile(r"\[(\d{1,4}(?:\s*[,，、]\s*\d{1,4})*)\]")
_LEADING_REFS = re.compile(r"^(?:\s*\[\d{1,4}(?:\s*[,，、]\s*\d{1,4})*\])+")
# Sentence ends: CJK and ASCII terminators (a '.' only before whitespace/end/'[' so 3.5 stays whole, and not
# after an initial: "John H. McArthur" is one name), newlines.
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)(?<!\b[A-Z]\.)(?=\s|$|\[)|\n")
# The same without clause breaks (；;): a quote keeps the whole sentence the source wrote.
_FULL_SENTENCE_END = re.compile(r"(?<=[。！？!?])|(?<=\.)(?<!\b[A-Z]\.)(?=\s|$|\[)|\n")
_MEANINGFUL = re.compile(r"[\w\u4e00-\u9fff]")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+\S")


def ref_numbers(text: str) -> list[int]:
    return [int(n) for group in REF.findall(text) for n in re.split(r"\s*[,，、]\s*", group)]


def split_sentences(text: str, *, clauses: bool = True) -> list[str]:
    """Sentences in order; citation markers written after the terminator stay with their sentence.
    `clauses=False` keeps "；"-separated clauses together in one sentence."""
    out: list[str] = []
    for piece in (_SENTENCE_END if clauses else _FULL_SENTENCE_END).split(text):
        lead = _LEADING_REFS.match(piece)
        if lead and out:
            out[-1] += lead.group(0)
            piece = piece[lead.end():]
        if piece.strip():
            out.append(piece.strip())
    return out


class CitationParser:
    def __init__(self, *, high_band: float = 0.6, medium_band: float = 0.3, min_sentence_chars: int = 4) -> None:
        if not 0 <= medium_band <= high_band <= 1:
            raise ValueError("bands must satisfy 0 <= medium <= high <= 1")
        if min_sentence_chars < 0:
            raise ValueError("min_sentence_chars must not be negative")
        self.high_band = high_band
        self.medium_band = medium_band
        self.min_sentence_chars = min_sentence_chars

    def run(self, *, answer: str, chunks: Sequence[ScoredChunk], rerank_top1: float,
            grade: Grade | GradeResult | None = None, question: str = "") -> CitationReport:
        valid: list[int] = []
        invalid: list[int] = []
        for n in ref_numbers(answer):
            bucket = valid if 1 <= n <= len(chunks) else invalid
            if n not in bucket:
                bucket.append(n)
        quotes: dict[int, list[str]] = {}
        for unit in self._units(answer):
            for n in ref_numbers(unit):
                quotes.setdefault(n, []).append(unit)
        citations = tuple(_citation(n, chunks[n - 1], quotes.get(n, ()), question) for n in valid)
        coverage = self._coverage(answer, len(chunks))
        top1 = min(1.0, max(0.0, float(rerank_top1)))
        score = top1 if coverage is None else min(1.0, max(0.0, coverage)) * top1
        band = "high" if score >= self.high_band else "medium" if score >= self.medium_band else "low"
        level = grade.grade if isinstance(grade, GradeResult) else grade
        ungrounded = coverage == 0.0 and level is Grade.LOW
        if ungrounded:
            # Observability only: the low-confidence template already told the user.
            logger.warning("low confidence answer (ungrounded: zero citation coverage)")
        return CitationReport(citations=citations, citation_coverage=coverage, invalid_refs=invalid,
                              confidence_score=score, confidence_band=band, ungrounded=ungrounded)

    def _coverage(self, answer: str, n_chunks: int) -> float | None:
        """Share of substantive units that cite a source. A unit is a sentence, except that a list item
        is one unit: a quoted passage of several sentences carries its citation once, at its end."""
        substantive = cited = 0
        for unit in self._units(answer):
            if not any(self._is_substantive(s) for s in split_sentences(unit)):
                continue
            substantive += 1
            if any(1 <= n <= n_chunks for n in ref_numbers(unit)):
                cited += 1
        return cited / substantive if substantive else None

    @staticmethod
    def _units(answer: str) -> list[str]:
        units: list[str] = []
        for line in answer.splitlines():
            if _LIST_ITEM.match(line):
                units.append(line)
            else:
                units.extend(split_sentences(line))
        return units

    def _is_substantive(self, sentence: str) -> bool:
        bare = REF.sub("", sentence).strip()
        # Headings and lead-ins ("以下内容摘自知识库：") introduce claims rather than make them.
        if bare.startswith("#") or bare.endswith((":", "：")):
            return False
        # A parenthesised aside ("（已按你记住的偏好作答……）") remarks on the answer; it is not a claim.
        if bare.startswith(("(", "（")) and bare.endswith((")", "）")):
            return False
        return len(_MEANINGFUL.findall(bare)) >= self.min_sentence_chars


def _citation(index: int, chunk: ScoredChunk, quotes: Sequence[str], question: str) -> Citation:
    """The citation's location is the page of the passage its sentences quote (the one answering the question
    first), where the chunk spans pages, or the parent's when that passage lies in the parent beyond the child."""
    own_text = chunk.child_content if chunk.child_content is not None else chunk.content
    ranked = rank_quotes(quotes, question, chunk.content)
    if chunk.parent_location is not None and not quoted_from(own_text, ranked) and quoted_from(chunk.content, ranked):
        location = cited_location(chunk.parent_location, chunk.content, ranked)
    else:
        location = cited_location(chunk.location, own_text, ranked)
    return Citation(index=index, chunk_id=chunk.chunk_id, document_id=chunk.document_id,
                    document_title=chunk.document_title, source=chunk.source.value, url=chunk.url,
                    location=location)

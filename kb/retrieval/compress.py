"""ContextCompressor: dedupe, drop near-duplicates, cut long chunks around the hit, pack into the evidence budget."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from docmind.evidence import EvidenceBudget
from docmind.text import SENTENCE_ENDS, bigrams, jaccard, normalise, salient_terms
from kb.retrieval.outcome import StageOutcome
from kb.retrieval.types import ScoredChunk

SNAP_CHARS = 80
# A child's closing lines shorter than this ("- 是", "| 1 |") may stand anywhere in its parent: they locate nothing.
LOCATING_CHARS = 20


class ContextCompressor:
    def __init__(self, *, budget: EvidenceBudget, window_chars: int = 800, near_dup_jaccard: float = 0.85) -> None:
        if window_chars <= 0:
            raise ValueError("window_chars must be positive")
        if not 0 <= near_dup_jaccard <= 1:
            raise ValueError("near_dup_jaccard must be in [0, 1]")
        self._budget = budget
        self._window = window_chars
        self._near = near_dup_jaccard

    def run(self, *, query: str, chunks: Sequence[ScoredChunk]) -> StageOutcome:
        """`chunks` best first; the better chunk wins every dedupe and gets the budget first."""
        kept = self._drop_near_duplicates(self._drop_exact_duplicates(chunks))
        windowed = [self.window(query, c) for c in kept]
        # Measured as the prompt will show them, so the prompt keeps every chunk packed here.
        packed, _ = self._budget.pack(windowed)
        skipped = len(windowed) - len(packed)
        notes = (f"compress: {skipped} chunk(s) over the token budget skipped",) if skipped else ()
        return StageOutcome(tuple(packed), notes)

    @staticmethod
    def _drop_exact_duplicates(chunks: Sequence[ScoredChunk]) -> list[ScoredChunk]:
        seen: set[str] = set()
        kept: list[ScoredChunk] = []
        for chunk in chunks:
            if chunk.dedupe_key() not in seen:
                seen.add(chunk.dedupe_key())
                kept.append(chunk)
        return kept

    def _drop_near_duplicates(self, chunks: list[ScoredChunk]) -> list[ScoredChunk]:
        kept: list[tuple[ScoredChunk, str, frozenset[str]]] = []
        for chunk in chunks:
            text = normalise(chunk.content)
            grams = bigrams(chunk.content)
            # Containment catches a parent next to its own child and web pages quoting each other.
            if any(text in other or other in text or jaccard(grams, other_grams) >= self._near
                   for _, other, other_grams in kept):
                continue
            kept.append((chunk, text, grams))
        return [chunk for chunk, _, _ in kept]

    def window(self, query: str, chunk: ScoredChunk) -> ScoredChunk:
        """The chunk cut to ≤ window_chars around the hit (child text, else query terms, else the head). The hit
        spans every child of the parent that retrieval returned (`sibling_contents`): each matched the question, so
        the window never cuts one away; when together they are longer than the window, it is their span."""
        text = chunk.content
        if len(text) <= self._window:
            return chunk
        hit = self._locate_hit(query, chunk)
        if hit is None:
            start, end = 0, self._window
            end = self._snap_end(text, end, floor=0)
            return replace(chunk, content=text[start:end])
        hits = [hit, *(found for sibling in chunk.sibling_contents
                       if (found := self._locate_child(text, sibling)) is not None)]
        hit_start, hit_end = min(start for start, _ in hits), max(end for _, end in hits)
        if hit_end - hit_start >= self._window:
            return replace(chunk, content=text[hit_start:hit_end])
        centre = (hit_start + hit_end) // 2
        start = max(0, min(centre - self._window // 2, len(text) - self._window))
        end = start + self._window
        start = self._snap_start(text, start, ceiling=hit_start)
        end = self._snap_end(text, end, floor=hit_end)
        return replace(chunk, content=text[start:end])

    @staticmethod
    def _locate_child(text: str, child: str) -> tuple[int, int] | None:
        """Where a child's text stands in its parent's `text`: whole, by its closing lines, or by its opening."""
        at = text.find(child)
        if at >= 0:
            return at, at + len(child)
        own = ContextCompressor._own_lines(text, child)
        if own:
            return own
        at = text.find(child.strip()[:40])
        if at >= 0:
            return at, min(len(text), at + len(child))
        return None

    @staticmethod
    def _locate_hit(query: str, chunk: ScoredChunk) -> tuple[int, int] | None:
        if chunk.child_content:
            found = ContextCompressor._locate_child(chunk.content, chunk.child_content)
            if found is not None:
                return found
        lowered = chunk.content.lower()
        # The heaviest query term that occurs: names and numbers locate the answer best.
        for term in sorted(salient_terms(query), key=lambda t: -t.weight):
            at = lowered.find(term.text)
            if at >= 0:
                return at, at + len(term.text)
        return None

    @staticmethod
    def _own_lines(text: str, child: str) -> tuple[int, int] | None:
        """Where the longest run of the child's closing lines stands whole in its parent's `text`; None when no run
        of LOCATING_CHARS or more does. A child cut from a long table repeats the table's header so that it reads
        on its own, while the parent holds that header at the table's top only: its rows, not its first characters,
        say where it was cut from."""
        lines = child.strip().splitlines()
        for k in range(len(lines)):
            rest = "\n".join(lines[k:]).strip()
            if len(rest) < LOCATING_CHARS:
                break
            at = text.find(rest)
            if at >= 0:
                return at, at + len(rest)
        return None

    @staticmethod
    def _snap_start(text: str, start: int, *, ceiling: int) -> int:
        """Move the start forward to just after a sentence end within SNAP_CHARS, never past the hit."""
        if start == 0:
            return 0
        limit = min(start + SNAP_CHARS, ceiling, len(text))
        for i in range(start - 1, limit):
            if i >= 0 and text[i] in SENTENCE_ENDS:
                return i + 1
        return start

    @staticmethod
    def _snap_end(text: str, end: int, *, floor: int) -> int:
        """Move the end back to just after a sentence end within SNAP_CHARS, never before the hit's end."""
        if end >= len(text):
            return len(text)
        for i in range(end - 1, max(end - 1 - SNAP_CHARS, floor - 1, -1), -1):
            if text[i] in SENTENCE_ENDS:
                return i + 1
        return end

"""ParentExpander: a hit child chunk becomes its parent's text; siblings collapse into one piece."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace

from kb.retrieval.outcome import StageOutcome
from kb.retrieval.ports import ParentLookup
from kb.retrieval.types import ScoredChunk, Source


class ParentExpander:
    def __init__(self, *, parents: ParentLookup) -> None:
        self._parents = parents

    def run(self, *, chunks: Sequence[ScoredChunk]) -> StageOutcome:
        kb_ids = [c.chunk_id for c in chunks if c.source == Source.KB and c.parent_id is None]
        notes: tuple[str, ...] = ()
        parents: dict[str, tuple] = {}
        if kb_ids:
            try:
                parents = self._parents.parents_of(kb_ids)
            except Exception as exc:  # the children alone are still valid evidence
                notes = (f"parent expansion failed ({exc.__class__.__name__}: {exc}); kept child chunks",)
        best: dict[str, ScoredChunk] = {}
        children: dict[str, list[str]] = defaultdict(list)
        for chunk in chunks:
            expanded = chunk
            if chunk.chunk_id in parents and chunk.source == Source.KB and chunk.parent_id is None:
                parent_id, parent_text, *located = parents[chunk.chunk_id]
                expanded = replace(chunk, content=parent_text, child_content=chunk.content, parent_id=parent_id,
                                   parent_location=located[0] if located else None)
            key = expanded.dedupe_key()
            if expanded.child_content is not None:
                children[key].append(expanded.child_content)
            # Two children of one parent are one piece of evidence: keep the better-scored child's view, and the
            # other's text, which compression must not cut away (`sibling_contents`).
            if key not in best or expanded.score > best[key].score:
                best[key] = expanded
        # First-appearance order: the input order (MMR's choice) is kept, not re-sorted by score.
        return StageOutcome(tuple(_with_siblings(chunk, children.get(key, ())) for key, chunk in best.items()), notes)


def _with_siblings(chunk: ScoredChunk, texts: Sequence[str]) -> ScoredChunk:
    siblings = tuple(text for text in texts if text and text != chunk.child_content)
    return replace(chunk, sibling_contents=siblings) if siblings else chunk

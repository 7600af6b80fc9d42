"""QueryTranslator: the question for the other language's passages — its content words by dictionary, for BM25,
and its vector less its language's mean, for the vector search."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from docmind.bilingual import (
    MAX_TRANSLATED_TERMS,
    TRANSLATION_WEIGHT,
    TRANSLATIONS_PER_TERM,
    Lexicon,
    TranslatedTerm,
    translate_terms,
)

# The translated BM25 list's RRF weight as a share of the BM25 list's.
TRANSLATED_SHARE = TRANSLATION_WEIGHT


class LanguageCentring(Protocol):
    """docmind.crosslingual.LanguageMeans, as the vector search needs it."""

    def centred(self, vector: np.ndarray, *, chinese: bool) -> np.ndarray | None: ...

    def offsets(self, vector: np.ndarray) -> tuple[float, float] | None: ...


@dataclass(frozen=True)
class TranslatedQuery:
    terms: tuple[TranslatedTerm, ...]

    @property
    def text(self) -> str:
        """The translations as one query for the BM25 index, each once."""
        return " ".join(dict.fromkeys(t for term in self.terms for t in term.targets))


class QueryTranslator:
    """Translates a question's content words into the other language (Chinese ↔ English) by dictionary.

    BM25 cannot match a Chinese question to an English chunk or the reverse: they share no token. The
    translation is for that leg only (HybridSearch keeps only its hits in the other language, so a knowledge
    base in one language gains nothing from it: the search itself is the check for documents in the other
    language, as documents do not record theirs). Bounded: at most `max_terms` words or phrases of the
    question, each with at most `per_term` translations; stop words and codes are not translated.
    """

    def __init__(self, *, lexicon: Lexicon, per_term: int = TRANSLATIONS_PER_TERM,
                 max_terms: int = MAX_TRANSLATED_TERMS, means: LanguageCentring | None = None) -> None:
        """`means`: takes the language out of a question's vector (docmind.crosslingual); without them only the
        words are translated."""
        if per_term <= 0 or max_terms <= 0:
            raise ValueError("per_term and max_terms must be positive")
        self._lexicon = lexicon
        self._means = means
        self._per_term, self._max_terms = per_term, max_terms

    def run(self, *, query: str) -> TranslatedQuery | None:
        terms = self.translate(query)
        return TranslatedQuery(terms=terms) if terms else None

    def vector(self, query_vector: np.ndarray, *, chinese: bool) -> np.ndarray | None:
        """The question's vector less its language's mean, or None without the means."""
        if self._means is None:
            return None
        return self._means.centred(query_vector, chinese=chinese)

    def language_offsets(self, vector: np.ndarray) -> tuple[float, float] | None:
        """(Chinese, English): what each language's mean adds to a passage's score against `vector`, or None
        without the means (docmind.crosslingual.LanguageMeans.offsets)."""
        if self._means is None:
            return None
        return self._means.offsets(vector)

    def translate(self, query: str) -> tuple[TranslatedTerm, ...]:
        """The question's translated words and phrases, in the order they appear (no gate)."""
        return translate_terms(query, self._lexicon, per_term=self._per_term, max_terms=self._max_terms)

"""QueryTranslator: dictionary translations of a question's content words, for BM25 over the other language."""
from __future__ import annotations

from dataclasses import dataclass

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
                 max_terms: int = MAX_TRANSLATED_TERMS) -> None:
        if per_term <= 0 or max_terms <= 0:
            raise ValueError("per_term and max_terms must be positive")
        self._lexicon = lexicon
        self._per_term, self._max_terms = per_term, max_terms

    def run(self, *, query: str) -> TranslatedQuery | None:
        terms = self.translate(query)
        return TranslatedQuery(terms=terms) if terms else None

    def translate(self, query: str) -> tuple[TranslatedTerm, ...]:
        """The question's translated words and phrases, in the order they appear (no gate)."""
        return translate_terms(query, self._lexicon, per_term=self._per_term, max_terms=self._max_terms)

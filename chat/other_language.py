"""When a search looks in the other language again — the one-shot search (`chat.pipeline.gathering`) and the agentic
loop's searchDocs (`chat.agentic.search`): its evidence in the question's language names the topic without what the
question asks, and the other language's evidence states it."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chat.confidence import TOP_N, missing_value, unsaid_words
from chat.value_kinds import ValueKind, asked_kind, states
from docmind.bilingual import TRANSLATIONS_PER_TERM, LazyLexicon, Lexicon, translate_terms, translated_coverage
from docmind.language import is_chinese
from kb.retrieval.types import ScoredChunk


@dataclass(frozen=True)
class OwnLanguageGap:
    """What the question asks that its own language's best evidence does not say: the words it names and never
    says, and the kind of value it asks for that no related sentence states (`chat.confidence`)."""

    unsaid: tuple[str, ...]
    kind: ValueKind | None

    def closed_by(self, question: str, chunks: Sequence[ScoredChunk], lexicon: Lexicon | None = None) -> bool:
        """Whether one of the top chunks in the other language than the question's states it all: a value of the
        kind, and every unsaid word as written (a code, a name) or by a dictionary translation (one the dictionary
        lacks cannot be shown said). Short of that the first search's evidence stays: the other language's
        passages rank by a meaning near the question's topic, which the own language's evidence already is."""
        zh = is_chinese(question)
        other = [f"{c.document_title} {c.context} {c.content}".lower() for c in chunks[:TOP_N]
                 if is_chinese(c.searchable_text) != zh]
        translated = {term.source: term for term in translate_terms(
            " ".join(self.unsaid), lexicon or LazyLexicon(), per_term=TRANSLATIONS_PER_TERM,
            max_terms=len(self.unsaid))} if self.unsaid else {}

        def says(text: str, word: str) -> bool:
            return word.lower() in text or word in translated and translated_coverage([translated[word]], text) > 0

        return any((self.kind is None or states(self.kind, text)) and all(says(text, w) for w in self.unsaid)
                   for text in other)


def own_language_gap(question: str, chunks: Sequence[ScoredChunk]) -> OwnLanguageGap | None:
    """What the best evidence leaves unsaid when it is in the question's language: a word the question names that
    it never says (`unsaid_words`), or no value of the kind asked (`missing_value`); None when it says it all or
    is in the other language. Retrieval searches the other language only when the question's own words are not
    all found in its own language (`kb.retrieval.hybrid`), so a passage that names the topic keeps a translation
    that states the value out of the candidates; this gap is what asks again."""
    if not chunks or is_chinese(chunks[0].searchable_text) != is_chinese(question):
        return None
    unsaid = unsaid_words(question, chunks)
    kind = asked_kind(question) if missing_value(question, chunks) else None
    return OwnLanguageGap(unsaid=unsaid, kind=kind) if unsaid or kind is not None else None

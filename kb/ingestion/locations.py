"""Where a chunk is in the original file, from the located spans the parser returned for the text it covers;
and where in it a cited passage is, for a chunk that runs over more than one page."""
from __future__ import annotations

import bisect
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from docmind.text import rarity, words
from kb.ingestion.parsers.base import Location

# A chunk of ~1,000 characters covers some 30 lines of a page; more boxes than this say nothing more.
MAX_BOXES = 60


class SpanLocator:
    """locate(start, end) → the location of text[start:end]: its first page with the boxes of its lines
    there, its sheet with the first and last row, or its slide; None when no span is known. A chunk that runs
    over several pages also gets `parts`: each page's stretch of the chunk's text (offsets from the chunk's
    start) with that page's boxes, so that a citation can name the page of the passage it quotes."""

    def __init__(self, spans: list[tuple[int, int, Location]]) -> None:
        self.spans = sorted(spans, key=lambda s: s[0])
        self._ends = [end for _, end, _ in self.spans]

    def locate(self, start: int, end: int) -> Location | None:
        first = bisect.bisect_right(self._ends, start)
        spans = []
        for span in self.spans[first:]:
            if span[0] >= end:
                break
            if span[1] > start:
                spans.append(span)
        if not spans:
            return None
        covered = [loc for _, _, loc in spans]
        head = covered[0]
        if "page" in head:
            boxes: list = []
            for loc in covered:
                if loc.get("page") == head["page"]:
                    boxes.extend(b for b in loc.get("boxes") or [] if b not in boxes)
            location: dict[str, Any] = {"page": head["page"], "boxes": boxes[:MAX_BOXES]}
            parts = _page_parts(spans, start, end)
            if len(parts) > 1:
                location["parts"] = parts
            return location
        if "rows" in head:
            same = [loc["rows"] for loc in covered if "rows" in loc and loc.get("sheet") == head.get("sheet")]
            return {"sheet": head.get("sheet"), "rows": [min(r[0] for r in same), max(r[1] for r in same)]}
        if "slide" in head:
            return {"slide": head["slide"]}
        return dict(head)


def _page_parts(spans: list[tuple[int, int, Location]], start: int, end: int) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for span_start, span_end, loc in spans:
        if "page" not in loc:
            continue
        lo, hi = max(span_start, start) - start, min(span_end, end) - start
        part = next((p for p in parts if p["page"] == loc["page"]), None)
        if part is None:
            part = {"page": loc["page"], "start": lo, "end": hi, "boxes": []}
            parts.append(part)
        part["start"], part["end"] = min(part["start"], lo), max(part["end"], hi)
        part["boxes"].extend(b for b in loc.get("boxes") or [] if b not in part["boxes"])
    # Text between located lines (a table's rows, a blank line) belongs to the page it follows: the parts tile
    # the chunk from its first character to its last.
    parts.sort(key=lambda p: p["start"])
    for index, part in enumerate(parts):
        part["start"] = 0 if index == 0 else part["start"]
        part["end"] = parts[index + 1]["start"] if index + 1 < len(parts) else end - start
        part["boxes"] = part["boxes"][:MAX_BOXES]
    return parts


# What a quote is compared on: letters, digits and CJK characters; spacing, punctuation and markup are not.
_NOISE = re.compile(r"[^\w\u4e00-\u9fff]+")
_REFS = re.compile(r"\[\d{1,4}(?:\s*[,，、]\s*\d{1,4})*\]")


def public_location(location: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The location as the API shows it: `parts` are the citation's working material."""
    return None if location is None else {k: v for k, v in location.items() if k != "parts"}


@dataclass(frozen=True)
class Quote:
    """A sentence of the answer citing a chunk, with the character pairs it is compared on."""

    text: str
    pairs: frozenset[str]

    @property
    def judgeable(self) -> bool:
        """Long enough to tell where it comes from: fewer than three pairs match by chance."""
        return len(self.pairs) >= 3


def rank_quotes(quotes: Iterable[str], question: str, text: str) -> list[Quote]:
    """The sentences citing a chunk, the one that answers the question first: by the question's character
    pairs each shares, a pair counting more the rarer the question's word it lies in is in the language
    (the subject's name says which line is meant, "进行一次" does not) and less the more often it recurs in the
    chunk's `text` (a phrase every line of a list repeats tells none of them apart). Ties keep answer order."""
    counts = Counter(_pair_list(text))
    asked = _question_pairs(question)
    ranked = [Quote(quote, frozenset(_pairs(_REFS.sub("", quote)))) for quote in quotes]

    def weight(quote: Quote) -> float:
        return sum(asked[pair] / max(1, counts[pair]) for pair in quote.pairs & asked.keys())

    return sorted(ranked, key=weight, reverse=True)


def quoted_from(text: str, quotes: Iterable[Quote]) -> bool:
    """Whether the first of `quotes` long enough to judge (or none at all) comes from `text`: half of its
    character pairs are there."""
    first = next((quote for quote in quotes if quote.judgeable), None)
    return first is None or len(first.pairs & _pairs(text)) / len(first.pairs) >= 0.5


def cited_location(location: Mapping[str, Any] | None, text: str, quotes: Iterable[Quote]) -> dict[str, Any] | None:
    """The location of the part of a chunk (`text`, the chunk's own text) that the answer's sentences citing
    it come from: the page holding at least half of a quote's character pairs (the most of them), trying the
    quotes in the order given (rank_quotes'). Else the chunk's own (first) page."""
    if location is None or not location.get("parts") or not text:
        return public_location(location)
    parts = location["parts"]
    # A parent's content may start with its section heading, which its offsets do not count.
    shift = max(0, len(text) - parts[-1]["end"])
    texts = [_pairs(text[shift + p["start"]:shift + p["end"]]) for p in parts]
    for quote in quotes:
        if not quote.judgeable:
            continue
        share, part = max(((len(quote.pairs & have) / len(quote.pairs), part)
                           for part, have in zip(parts, texts, strict=True)), key=lambda pair: pair[0])
        if share >= 0.5:
            return {"page": part["page"], "boxes": part["boxes"]}
    return public_location(location)


def _question_pairs(question: str) -> dict[str, float]:
    """The question's character pairs, each with the rarity of the word it lies in; a pair that straddles two
    words takes the commoner one's, since it says no more than that word does."""
    chars: list[tuple[str, float]] = []
    for word in words(question.lower()):
        weight = rarity(word)
        chars.extend((char, weight) for char in _NOISE.sub("", word))
    pairs: dict[str, float] = {}
    for (a, wa), (b, wb) in itertools.pairwise(chars):
        pairs[a + b] = max(pairs.get(a + b, 0.0), min(wa, wb))
    return pairs


def _pair_list(text: str) -> list[str]:
    bare = _NOISE.sub("", text.lower())
    return [bare[i:i + 2] for i in range(len(bare) - 1)]


def _pairs(text: str) -> set[str]:
    return set(_pair_list(text))

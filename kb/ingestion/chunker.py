"""TextChunker: parent chunks (~1000 chars) split into child chunks (~240) on sentence boundaries.

A child never consists of a heading alone: headings are carried as the child's `context` (document
title › section path), which is indexed with the child and shown once on its source card. A child that
starts inside a Markdown table's body starts with that table's header row: a row alone does not say what
its cells are the values of.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from docmind.text import MARKDOWN_TABLE_ROW, MARKDOWN_TABLE_RULE, faq_pair

# A heading line as the parsers emit it (Markdown style; docx/html headings are rewritten to it).
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+\S.*$", re.MULTILINE)
# Sentence ends: Chinese punctuation (。！？；) with trailing closing quotes; English . ! ? ; followed by
# whitespace; and line breaks, which end list items and headings.
# Deliberately not chat/citations.split_sentences: chunks need offsets into the source, quotes stay with their
# sentence, and any change here moves the chunk boundaries of every ingested document.
# An ASCII semicolon ends no sentence: it joins the cells of a spreadsheet row ("编号: FS-12; 环节: 洗手"), which a
# piece must never split, and an English sentence's clauses, which an over-long sentence is cut at like a comma.
_SENTENCE_END = re.compile(r"[。！？；!?…]+[”’\"』」）)]*|[.!?]+[\"')\]]*(?=\s)|\n+")
_SOFT_BREAK = re.compile(r"[，,、：:;\s]")
_HEADING_MARK = re.compile(r"^[ \t]*(#{1,6})[ \t]+")
_NON_WORD = re.compile(r"[\W_]+")
CONTEXT_SEPARATOR = " › "
CONTEXT_MAX_CHARS = 300


def retrieval_text(context: str, content: str) -> str:
    """What search indexes for a child: its context line, then its own text."""
    return f"{context}\n{content}" if context else content


def _key(text: str) -> str:
    return _NON_WORD.sub("", _HEADING_MARK.sub("", text).lower())


@dataclass(frozen=True)
class ChildPiece:
    content: str
    start: int
    end: int


@dataclass(frozen=True)
class ParentPiece:
    """`content` may carry its section heading as a prefix; start/end locate the body in the source text.
    `context` is the document title and the section's heading path, shared by its children."""

    content: str
    start: int
    end: int
    children: list[ChildPiece] = field(default_factory=list)
    context: str = ""


class TextChunker:
    """Splits text into parents of about `parent_chars` and children of about `child_chars`.

    Sizes are targets: a piece closes once it reaches 80 % of the target and the next sentence
    would overshoot it, and is forced closed before 120 %. Sentences longer than that are cut
    at a comma or space near the limit. A heading starts a new parent.
    """

    def __init__(self, *, parent_chars: int, child_chars: int) -> None:
        if child_chars <= 0 or parent_chars <= 0:
            raise ValueError("chunk sizes must be positive")
        if child_chars > parent_chars:
            raise ValueError("child chunks cannot be larger than parent chunks")
        self.parent_chars = parent_chars
        self.child_chars = child_chars

    def split(self, text: str, *, title: str = "") -> list[ParentPiece]:
        parents: list[ParentPiece] = []
        path: list[tuple[int, str]] = []  # (heading level, heading text) from the outermost section inwards
        # A line that only repeats the title or a heading says nothing of its own: a PDF's title line standing before
        # the same text as its first heading, a table of contents.
        labels = {key for key in (_key(title), *(_key(m.group(0)) for m in _HEADING.finditer(text))) if key}
        for heading, start, end in self._sections(text):
            if heading:
                level = len(_HEADING_MARK.match(heading).group(1))
                path = [(lvl, h) for lvl, h in path if lvl < level] + [(level, _HEADING_MARK.sub("", heading))]
            spans = self._sentences(text, start, end, self.child_chars)
            # The heading line and a line that only repeats the title or a heading are context, not content: a child
            # made of them alone would be retrieved, cited and quoted while saying nothing.
            body_spans = [s for s in spans if not _is_label(text[s[0]:s[1]], labels)]
            if not body_spans:
                continue
            context = _context(title, [h for _, h in path])
            # An FAQ's question never ends a piece its answer does not continue: alone it answers nothing.
            leads = {span for span, after in zip(spans, spans[1:], strict=False)
                     if faq_pair(text[span[0]:span[1]], text[after[0]:after[1]])}
            for index, group in enumerate(self._pack(spans, self.parent_chars, leads)):
                p_start, p_end = group[0][0], group[-1][1]
                body = text[p_start:p_end]
                # Later parents of a section repeat its heading so that they still say what they are about.
                content = f"{heading}\n{body}" if heading and index > 0 else body
                own = [s for s in group if not _is_label(text[s[0]:s[1]], labels)]
                if not own:
                    continue
                children = [ChildPiece(_table_header(text, s[0][0]) + text[s[0][0]:s[-1][1]], s[0][0], s[-1][1])
                            for s in self._pack(own, self.child_chars, leads)]
                parents.append(ParentPiece(content, p_start, p_end, children, context))
        return parents

    @staticmethod
    def _sections(text: str) -> list[tuple[str | None, int, int]]:
        starts = [m.start() for m in _HEADING.finditer(text)]
        if not starts or starts[0] != 0:
            starts.insert(0, 0)
        sections = []
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else len(text)
            match = _HEADING.match(text, start)
            heading = match.group(0).strip() if match and match.start() == start else None
            sections.append((heading, start, end))
        return sections

    @staticmethod
    def _sentences(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
        """Sentence spans with surrounding whitespace trimmed; over-long ones cut near `limit`."""
        spans: list[tuple[int, int]] = []
        cursor = start
        for match in _SENTENCE_END.finditer(text, start, end):
            spans.extend(_trimmed_pieces(text, cursor, match.end(), limit))
            cursor = match.end()
        spans.extend(_trimmed_pieces(text, cursor, end, limit))
        return spans

    @staticmethod
    def _pack(spans: list[tuple[int, int]], target: int,
              leads: set[tuple[int, int]] | frozenset = frozenset()) -> list[list[tuple[int, int]]]:
        """Consecutive spans in pieces of about `target` characters; a span of `leads` opens the next piece rather
        than close one (it belongs with the span after it)."""
        groups: list[list[tuple[int, int]]] = []
        current: list[tuple[int, int]] = []
        for span in spans:
            if current:
                size = span[1] - current[0][0]
                filled = current[-1][1] - current[0][0]
                if (size > target and filled >= 0.8 * target) or size > 1.2 * target:
                    carried = [current.pop()] if len(current) > 1 and current[-1] in leads else []
                    groups.append(current)
                    current = carried
            current.append(span)
        if current:
            tail = current[-1][1] - current[0][0]
            # A small remainder joins the previous piece rather than standing alone as a fragment.
            if groups and tail < 0.3 * target and current[-1][1] - groups[-1][0][0] <= 1.5 * target:
                groups[-1].extend(current)
            else:
                groups.append(current)
        return groups


def _is_label(piece: str, labels: set[str]) -> bool:
    """A heading line, or a line that is only the document title or a heading's text (`labels`, as `_key`s)."""
    return bool(_HEADING.fullmatch(piece.strip())) or _key(piece) in labels


def _table_header(text: str, start: int) -> str:
    """The header row and rule line of the Markdown table whose body a piece starting at `start` continues, with
    a line break after them; "" when the piece starts anywhere else (its own header row, outside a table, or
    inside a line). The piece's offsets keep locating its own text: the header is context, as a later parent's
    repeated section heading is."""
    if start and text[start - 1] != "\n":
        return ""
    first_end = text.find("\n", start)
    first = text[start:first_end if first_end >= 0 else len(text)]
    if not MARKDOWN_TABLE_ROW.match(first) or MARKDOWN_TABLE_RULE.match(first):
        return ""
    if first_end >= 0:
        second_end = text.find("\n", first_end + 1)
        if MARKDOWN_TABLE_RULE.match(text[first_end + 1:second_end if second_end >= 0 else len(text)]):
            return ""  # the piece starts with a header row of its own
    end, below = start - 1, ""  # `end`: the line break that ends the line above
    while end > 0:  # up through the table's lines to its rule; the header is the line above the rule
        line_start = text.rfind("\n", 0, end) + 1
        line = text[line_start:end]
        if not MARKDOWN_TABLE_ROW.match(line):
            return ""
        if below and MARKDOWN_TABLE_RULE.match(below):
            return f"{line.strip()}\n{below.strip()}\n"
        below, end = line, line_start - 1
    return ""


def _context(title: str, headings: list[str]) -> str:
    parts = [title.strip()] if title.strip() else []
    for heading in headings:
        # A top heading that repeats the title ("# 支付失败排查手册") adds nothing.
        if heading.strip() and all(_key(heading) != _key(p) for p in parts):
            parts.append(heading.strip())
    return CONTEXT_SEPARATOR.join(parts)[:CONTEXT_MAX_CHARS]


def _trimmed_pieces(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    pieces = []
    while end - start > limit:
        cut = start + limit
        # Prefer a comma or space in the last third of the window over a cut inside a word.
        window = text[start + limit * 2 // 3:cut]
        soft = [m.end() for m in _SOFT_BREAK.finditer(window)]
        if soft:
            cut = start + limit * 2 // 3 + soft[-1]
        pieces.append((start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        pieces.append((start, end))
    return pieces

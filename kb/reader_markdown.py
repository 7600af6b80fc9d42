"""A document's parsed text as HTML for the reader: its Markdown (headings, lists, tables) rendered, the cited
passage marked, and nothing in the text able to become markup of its own."""
from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath

from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

# Private-use characters around the cited passage: they survive rendering as plain text, and no parser
# output or document text is expected to hold them (any that do are dropped first).
_START, _END = "\ue000", "\ue001"
# Block markers that must stay at the start of their line for the line to stay a heading, item or row.
_LINE_MARKER = re.compile(r"[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+|\d{1,3}[.)][ \t]+|>[ \t]?|\|[ \t]*)?")
_TAG = re.compile(r"<[^>]+>")
_MARK_IN_TAG = re.compile(f"<[^>]*[{_START}{_END}][^>]*>")

# CommonMark with tables; raw HTML in a document is shown as text, never passed through.
_renderer = MarkdownIt("commonmark", {"html": False, "breaks": True, "linkify": False}).enable("table")


def render_section(before: str, cited: str, after: str) -> SafeString:
    """`before + cited + after` rendered as Markdown, with <mark id="cited"> around the cited part (split at
    block boundaries, so that the marks nest inside headings, items and cells)."""
    before, cited, after = (_clean(part) for part in (before, cited, after))
    if not cited:
        return mark_safe(_renderer.render(before + after))
    # Keep a line's block marker ahead of the start mark, or "## Heading" would become a paragraph.
    line_start = before.rfind("\n") + 1
    if not before[line_start:].strip():
        marker = _LINE_MARKER.match(cited).end()
        before, cited = before + cited[:marker], cited[marker:]
    html = _renderer.render(before + _START + cited + _END + after)
    if _MARK_IN_TAG.search(html) or html.count(_START) != 1 or html.count(_END) != 1:
        # The passage starts or ends inside a link or image address: mark the whole section instead.
        whole = _renderer.render(before + cited + after)
        return mark_safe(f'<div class="cited-block" id="cited">{whole}</div>')
    head, _, rest = html.partition(_START)
    body, _, tail = rest.partition(_END)
    # Close and reopen the mark around every tag inside the passage, then drop marks left empty.
    body = _TAG.sub(lambda m: f"</mark>{m.group(0)}<mark>", body)
    marked = re.sub(r"<mark>(\s*)</mark>", r"\1", f"<mark>{body}</mark>")
    marked = marked.replace("<mark>", '<mark id="cited" class="cited-passage">', 1)
    return mark_safe(head + marked.replace("<mark>", '<mark class="cited-passage">') + tail)


def _clean(text: str) -> str:
    return text.replace(_START, "").replace(_END, "")


_SLUG = re.compile(r"^[\w.]+(?:[-_][\w.]+)+$")
_HEADING = re.compile(r"^\s*#{1,6}[ \t]+(.+?)\s*#*\s*$", re.MULTILINE)


# A top-level heading line: what the parsers write for a page's <h1> and a document's title heading.
_TOP_HEADING = re.compile(r"^# +(\S.*?)\s*$", re.MULTILINE)


def top_level_heading(texts: Iterable[str]) -> str:
    """The first top-level heading ("# …") of a document's section texts, in reading order; "" without one. A saved
    web page often opens with a banner's lower-level heading ("## 新店开业限时福利") above the page's own `<h1>`,
    which names it."""
    for text in texts:
        found = _TOP_HEADING.search(text)
        if found:
            return found.group(1).strip()
    return ""


def display_title(title: str, file_name: str, first_text: str, top_heading: str = "") -> str:
    """The document's title for people. One that is only its file's name (`leave-policy_2024`, what an upload
    without a title gets) is shown as the heading its text opens under (`top_heading`), else the text's first
    heading, else with the name's separators read as spaces; a title someone gave stays as it is."""
    stem = PurePosixPath(file_name).stem if file_name else ""
    from_file = (title == stem or stem.startswith(title + "_")) if stem else bool(_SLUG.match(title))
    if not from_file:
        return title
    if top_heading:
        return top_heading
    heading = _HEADING.search(first_text or "")
    if heading:
        return heading.group(1).strip()
    return re.sub(r"[-_]+", " ", title).strip() if _SLUG.match(title) else title

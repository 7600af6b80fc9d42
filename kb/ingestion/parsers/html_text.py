"""HTML → the page's main content as text: navigation, headers, footers, sidebars, forms and scripts dropped,
headings kept as Markdown '#' lines, list items and tables (as Markdown tables) in place."""
from __future__ import annotations

import re

from kb.ingestion.parsers.tables import markdown_row, row_groups, separator, square

# Never content, wherever they stand.
_DROP = {"script", "style", "noscript", "template", "head", "iframe", "svg", "canvas", "form", "button",
         "select", "input", "textarea", "object", "embed"}
# Page furniture around the content (HTML5 sectioning and ARIA landmarks).
_FURNITURE_TAGS = {"nav", "header", "footer", "aside"}
_FURNITURE_ROLES = {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar"}
# class/id words of boilerplate in pages that use plain divs.
_FURNITURE_NAMES = re.compile(r"(?:^|[-_\s])(?:nav|navbar|navigation|menu|breadcrumbs?|footer|sidebar|cookie"
                              r"|cookies|banner|masthead|skip-link|share|social|pagination|toc)(?:$|[-_\s])",
                              re.IGNORECASE)
_BLOCKS = {"p", "div", "section", "article", "main", "li", "dd", "dt", "blockquote", "pre", "figcaption",
           "address", "br", "hr", "ul", "ol", "dl", "figure", "details", "summary", "caption"}
_HEADING = re.compile(r"h([1-6])")


def html_to_text(html: str) -> str:
    """The main content of a page; falls back to the whole body when no main element stands out."""
    # heavy: lxml.html (about 15 ms) loads with the first HTML page, not at django.setup()
    import lxml.html
    from lxml import etree

    if not html.strip():
        return ""
    try:
        root = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return ""
    for element in list(root.iter(etree.Comment, etree.ProcessingInstruction)):
        _remove(element)
    for element in list(root.iter()):
        if isinstance(element.tag, str) and element.tag.lower() in _DROP:
            _remove(element)
    content = _main(root)
    for element in list(content.iter()):
        if element is not content and _is_furniture(element):
            _remove(element)
    lines: list[str] = []
    _walk(content, lines)
    text = "".join(lines)
    return "\n".join(re.sub(r"[ \t]+", " ", line).strip() for line in text.split("\n"))


def _remove(element) -> None:
    parent = element.getparent()
    if parent is None:
        return
    tail = element.tail
    if tail:  # the text after the element belongs to its parent
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)


def _main(root):
    for query in ("//main", "//*[@role='main']", "//article"):
        found = root.xpath(query)
        if len(found) == 1:
            return found[0]
    body = root.find("body")
    return body if body is not None else root


def _is_furniture(element) -> bool:
    if not isinstance(element.tag, str):
        return False
    if element.tag.lower() in _FURNITURE_TAGS:
        return True
    if (element.get("role") or "").lower() in _FURNITURE_ROLES:
        return True
    if element.get("hidden") is not None or (element.get("aria-hidden") or "").lower() == "true":
        return True
    names = f"{element.get('class') or ''} {element.get('id') or ''}"
    return bool(names.strip()) and bool(_FURNITURE_NAMES.search(names))


def _walk(element, out: list[str]) -> None:
    tag = element.tag.lower() if isinstance(element.tag, str) else ""
    heading = _HEADING.fullmatch(tag)
    if tag == "table":
        out.append("\n\n" + _table(element) + "\n\n")
        out.append(_space(element.tail))
        return
    if heading:
        out.append("\n\n" + "#" * int(heading.group(1)) + " " + " ".join(element.text_content().split()) + "\n\n")
        out.append(_space(element.tail))
        return
    if tag == "pre":
        out.append("\n\n" + element.text_content().strip("\n") + "\n\n")
        out.append(_space(element.tail))
        return
    block = tag in _BLOCKS or tag in ("td", "th", "tr")
    if block:
        out.append("\n")
    if tag == "li":
        out.append("- ")
    out.append(_space(element.text))
    for child in element:
        _walk(child, out)
    if block:
        out.append("\n")
    out.append(_space(element.tail))


def _space(text: str | None) -> str:
    return re.sub(r"\s+", " ", text) if text else ""


def _table(table) -> str:
    rows = []
    for row in table.iter("tr"):
        rows.append([" ".join(cell.text_content().split()) for cell in row if cell.tag in ("td", "th")])
    rows = square(rows)
    if not rows:
        return ""
    if len(rows) == 1 or len(rows[0]) == 1:  # a layout table: its text, not a grid
        return "\n".join("  ".join(c for c in row if c) for row in rows)
    header, *body = rows
    head = f"{markdown_row(header)}\n{separator(len(header))}\n"
    lines = [markdown_row(row) for row in body]
    return "\n\n".join(head + "\n".join(lines[i] for i in group)
                       for group in row_groups(lines, head_chars=len(head)))

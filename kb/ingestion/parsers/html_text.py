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
# class/id words of boilerplate in pages that use plain divs, the ones content-management systems write into
# Chinese sites included: the page's header and footer (header, hd, foot, ft), the top and login bar, the trail
# (crumb), the previous and next article (prenext), related links, and the floating buttons (online service, back to
# top). Words that as often name content (position, location, user, tools, search) are left to the line patterns.
_FURNITURE_NAMES = re.compile(r"(?:^|[-_\s])(?:nav|navbar|navigation|menu|breadcrumbs?|crumbs?|footer|foot|ft|"
                              r"header|hd|sidebar|cookie|cookies|banner|masthead|skip-link|share|social|pagination|"
                              r"pager|toc|top-?bar|toolbar|login|related|relate|prenext|pre-?next|prev-?next|"
                              r"page-?nav|qr|qrcode|copyright|friend-?links?|quick|logo|widget|float|floating|kefu|"
                              r"backtop|back-top|gotop|go-top)(?:$|[-_\s])",
                              re.IGNORECASE)
# Lines that say where the page sits, what comes before and after it, how often it was read or who registered the
# site, whatever their markup: never what the page is about.
_BOILERPLATE_LINE = re.compile(r"^(?:当前位置|您的位置|你的位置|您现在的位置|现在的位置|所在位置)[:：].*(?:>|»|›|＞|/)|"
                               r"^(?:上一篇|下一篇|上一条|下一条|上篇|下篇)[:：]|ICP备\s*\d|公网安备|"
                               r"^【?\s*大\s*中\s*小\s*】")
# A fragment of a line that counts visits or offers to print, within the line that says when the page was published.
_BOILERPLATE_PART = re.compile(r"(?:阅读量|阅读次数|浏览次数|浏览量|点击数|点击量|点击次数|访问量)[:：]\s*\d+|"
                               r"您是第\s*\d+\s*位访客|字号[:：]\s*【?\s*大\s*中\s*小\s*】?|打印本页|关闭窗口|"
                               r"[【\[](?:打印|关闭|返回顶部|收藏|分享)[】\]]")
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
    whole = _size(content)
    for element in list(content.iter()):
        if element is not content and _is_furniture(element) and not _holds_the_page(element, whole):
            _remove(element)
    lines: list[str] = []
    _walk(content, lines)
    text = "".join(lines)
    kept = (re.sub(r"[ \t]+", " ", _BOILERPLATE_PART.sub("", line)).strip() for line in text.split("\n"))
    return "\n".join(line for line in kept if not _BOILERPLATE_LINE.search(line))


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


def _holds_the_page(element, whole: int) -> bool:
    """Named like furniture but holding the page's title or most of its text ("article-header" around the <h1>, a
    "main-header" wrapping everything): content, whatever its name."""
    if element.tag.lower() == "h1" or element.find(".//h1") is not None:
        return True
    return _size(element) * 2 > whole


def _size(element) -> int:
    """Characters of the element's text, spaces left out."""
    return sum(len(piece) - piece.count(" ") - piece.count("\n") - piece.count("\t") for piece in element.itertext())


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


# A span beyond this many rows or columns is a layout trick, not a cell (browsers cap rowspan at 65534 as well).
MAX_SPAN = 50


def _span(cell, name: str) -> int:
    try:
        return max(1, min(MAX_SPAN, int(cell.get(name) or 1)))
    except ValueError:
        return 1


def _grid(table) -> list[list[str]]:
    """The table's rows with a merged cell's text in every row and column it spans, as a reader sees it: a fee
    spanning 境内 and 境外 applies to both, a 科室 spanning three rows names each of them."""
    rows: list[list[str]] = []
    carried: dict[int, tuple[int, str]] = {}  # column → (rows still covered, text) of a cell spanning rows
    for tr in table.iter("tr"):
        row: list[str] = []
        cells = iter(cell for cell in tr if isinstance(cell.tag, str) and cell.tag.lower() in ("td", "th"))
        cell = next(cells, None)
        while cell is not None or any(c >= len(row) for c in carried):
            column = len(row)
            if column in carried:
                left, text = carried[column]
                row.append(text)
                if left > 1:
                    carried[column] = (left - 1, text)
                else:
                    del carried[column]
                continue
            if cell is None:
                row.append("")
                continue
            text = " ".join(cell.text_content().split())
            down = _span(cell, "rowspan")
            for k in range(_span(cell, "colspan")):
                if down > 1:
                    carried[column + k] = (down - 1, text)
                row.append(text)
            cell = next(cells, None)
        rows.append(row)
    return rows


def _table(table) -> str:
    rows = square(_grid(table))
    if not rows:
        return ""
    if len(rows) == 1 or len(rows[0]) == 1:  # a layout table: its text, not a grid
        return "\n".join("  ".join(c for c in row if c) for row in rows)
    header, *body = rows
    head = f"{markdown_row(header)}\n{separator(len(header))}\n"
    lines = [markdown_row(row) for row in body]
    return "\n\n".join(head + "\n".join(lines[i] for i in group)
                       for group in row_groups(lines, head_chars=len(head)))

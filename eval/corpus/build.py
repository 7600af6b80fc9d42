"""Build the development corpus: documents (.md, .txt, .html, .docx, .pdf) under docs/ and questions.jsonl.

Run: .venv/bin/python eval/corpus/build.py   (deterministic apart from the .docx zip timestamps)

Every question line: {"id", "split", "category", "question", "answers", "documents"}; a conversation's
turns share a "conversation" id and carry their "turn" number; a recall question carries the "history" said
before it in the same conversation. The split ("tune" or "check") is fixed by a
hash of the gold document (of the first turn's document for a conversation, of the text where there is no
document), so that tuning never sees a check document's questions.
"""
from __future__ import annotations

import hashlib
import html
import json
import re
import sys
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from documents import DOCUMENTS  # noqa: E402
from questions_data import BY_DOCUMENT, CONVERSATIONS, RECALLS, STATEMENTS, UNANSWERABLE  # noqa: E402

SUFFIX = {"md": ".md", "txt": ".txt", "html": ".html", "docx": ".docx", "pdf": ".pdf"}


def split_of(key: str) -> str:
    return "tune" if hashlib.sha1(key.encode("utf-8")).digest()[0] % 2 == 0 else "check"


def filename(doc: dict) -> str:
    return doc["id"] + SUFFIX[doc["format"]]


def render_md(doc: dict) -> str:
    lines = [f"# {doc['title']}", ""]
    for kind, text in doc["blocks"]:
        if kind == "table":
            head, *rows = text
            lines += ([""] if lines[-1] else []) + [
                "| " + " | ".join(head) + " |", "|" + " --- |" * len(head),
                *("| " + " | ".join(row) + " |" for row in rows), ""]
            continue
        lines += [f"## {text}", ""] if kind == "h" else [f"- {text}"] if kind == "li" else [text, ""]
    return "\n".join(lines).replace("\n\n\n", "\n\n").rstrip() + "\n"


def display_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def text_table(rows: list[list[str]]) -> list[str]:
    """A table as a plain-text export writes one: cells padded to their column's width, two spaces apart."""
    widths = [max(display_width(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell + " " * (w - display_width(cell)) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows]


def render_txt(doc: dict) -> str:
    lines, number = [doc["title"], ""], 0
    for kind, text in doc["blocks"]:
        if kind == "table":
            number = 0
            lines += ["", *text_table(text), ""]
            continue
        if kind == "li":
            number += 1
            lines.append(f"{number}. {text}")
            continue
        number = 0
        lines += ["", text, ""] if kind == "h" else [text]
    return "\n".join(lines).strip() + "\n"


def render_html(doc: dict) -> str:
    body, in_list = [], False
    for kind, text in doc["blocks"]:
        if kind != "li" and in_list:
            body.append("</ul>")
            in_list = False
        if kind == "li" and not in_list:
            body.append("<ul>")
            in_list = True
        if kind == "table":
            head, *rows = text
            body.append("<table>\n<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in head) + "</tr>")
            body += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows]
            body.append("</table>")
            continue
        tag = {"h": "h2", "p": "p", "li": "li"}[kind]
        body.append(f"<{tag}>{html.escape(text)}</{tag}>")
    if in_list:
        body.append("</ul>")
    title = html.escape(doc["title"])
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title></head>\n<body>\n"
            f"<h1>{title}</h1>\n" + "\n".join(body) + "\n</body></html>\n")


def write_docx(doc: dict, path: Path) -> None:
    import datetime

    import docx

    document = docx.Document()
    document.core_properties.title = doc["title"]
    document.core_properties.created = document.core_properties.modified = datetime.datetime(2026, 1, 1)
    document.add_heading(doc["title"], level=1)
    for kind, text in doc["blocks"]:
        if kind == "h":
            document.add_heading(text, level=2)
        elif kind == "li":
            document.add_paragraph(text, style="List Bullet")
        elif kind == "table":
            table = document.add_table(rows=len(text), cols=len(text[0]), style="Table Grid")
            for cells, row in zip(table.rows, text, strict=True):
                for cell, value in zip(cells.cells, row, strict=True):
                    cell.text = value
        else:
            document.add_paragraph(text)
    document.save(str(path))


# A PDF as an office suite exports one: A4, the title as a running header, the page number as a footer, lines
# filled to the right margin, so that a Chinese sentence breaks wherever the line is full, and tables as rows of
# text at column positions (no tagged structure to recover them from).
PDF_MARGIN = 64.0
PDF_BODY, PDF_LEADING = 10.5, 16.0
# Chinese rules as exporters apply them: these never start a line, they stay at the end of the one before.
NO_LINE_START = set("，。、；：？！）》」』”’%,.;:?!)")
UNIT = re.compile(r"[A-Za-z0-9@._%/+\-:°²³×–'’&>(),;!?\"“”]+|\s+|.", re.S)


def pdf_fonts(doc: dict) -> tuple[str, str]:
    """(body font, heading font): the CJK CID font for Chinese documents, Helvetica for English ones."""
    if doc["id"].endswith("-zh"):
        from reportlab.pdfbase import pdfmetrics
        from reportlab.pdfbase.cidfonts import UnicodeCIDFont

        if "STSong-Light" not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
        return "STSong-Light", "STSong-Light"
    return "Helvetica", "Helvetica-Bold"


def wrap(text: str, font: str, size: float, width: float) -> list[str]:
    """Greedy line filling: Latin words and numbers stay whole, every CJK character is a break opportunity."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    lines, line = [], ""
    for unit in UNIT.findall(text):
        if not line and unit.isspace():
            continue
        if stringWidth(line + unit, font, size) <= width or not line or unit in NO_LINE_START:
            line += unit
            continue
        lines.append(line.rstrip())
        line = "" if unit.isspace() else unit
    if line.strip():
        lines.append(line.rstrip())
    return lines or [""]


def column_widths(rows: list[list[str]], font: str, size: float, width: float) -> list[float]:
    from reportlab.pdfbase.pdfmetrics import stringWidth

    gap = size * 1.5
    natural = [max(stringWidth(row[i], font, size) for row in rows) + gap for i in range(len(rows[0]))]
    if sum(natural) <= width:
        return natural
    # Too wide: columns keep what they need up to a fair share; the rest of the width goes to the wide ones.
    fair = width / len(natural)
    narrow = sum(w for w in natural if w <= fair)
    wide = sum(w for w in natural if w > fair)
    return [w if w <= fair else (width - narrow) * w / wide for w in natural]


def write_pdf(doc: dict, path: Path) -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    body, bold = pdf_fonts(doc)
    chinese = body == "STSong-Light"
    page_w, page_h = A4
    left, right, top, bottom = PDF_MARGIN, page_w - PDF_MARGIN, page_h - PDF_MARGIN, PDF_MARGIN
    width = right - left
    pdf = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    pdf.setTitle(doc["title"])
    state = {"page": 0, "y": 0.0}

    def new_page() -> None:
        if state["page"]:
            pdf.showPage()
        state["page"] += 1
        pdf.setFont(body, 8.5)
        pdf.setFillGray(0.35)
        pdf.drawString(left, page_h - 40, doc["title"])
        pdf.setStrokeGray(0.6)
        pdf.setLineWidth(0.5)
        pdf.line(left, page_h - 45, right, page_h - 45)
        footer = f"第 {state['page']} 页" if chinese else f"Page {state['page']}"
        pdf.drawCentredString(page_w / 2, 36, footer)
        pdf.setFillGray(0)
        state["y"] = top

    def draw(lines: list[str], font: str, size: float, leading: float, x: float, first: str = "") -> None:
        for n, line in enumerate(lines):
            if state["y"] - leading < bottom:
                new_page()
            state["y"] -= leading
            pdf.setFont(font, size)
            if n == 0 and first:
                pdf.drawString(x - pdf.stringWidth(first, font, size), state["y"], first)
            pdf.drawString(x, state["y"], line)

    def space(points: float) -> None:
        state["y"] = max(state["y"] - points, bottom)

    new_page()
    draw(wrap(doc["title"], bold, 16, width), bold, 16, 22, left)
    space(8)
    number = 0
    for kind, text in doc["blocks"]:
        number = number + 1 if kind == "li" else 0
        if kind == "h":
            if state["y"] - 3 * PDF_LEADING < bottom:  # a heading does not stay alone at the foot of a page
                new_page()
            space(6)
            draw(wrap(text, bold, 12.5, width), bold, 12.5, 19, left)
            space(2)
        elif kind == "p":
            draw(wrap(text, body, PDF_BODY, width), body, PDF_BODY, PDF_LEADING, left)
            space(5)
        elif kind == "li":
            marker = f"{number}. " if chinese else "\u2022  "
            indent = left + 18
            draw(wrap(text, body, PDF_BODY, right - indent), body, PDF_BODY, PDF_LEADING, indent, marker)
            space(2)
        else:
            space(4)
            widths = column_widths(text, body, 9.5, width)
            for r, row in enumerate(text):
                font = bold if r == 0 else body
                cells = [wrap(cell, font, 9.5, w - 9.5) for cell, w in zip(row, widths, strict=True)]
                height = 14.0 * max(len(c) for c in cells)
                if state["y"] - height < bottom:
                    new_page()
                y = state["y"]
                for i, cell in enumerate(cells):
                    x = left + sum(widths[:i])
                    for k, line in enumerate(cell):
                        pdf.setFont(font, 9.5)
                        pdf.drawString(x, y - 11 - 14 * k, line)
                state["y"] = y - height - 3
                if r == 0:
                    pdf.setLineWidth(0.5)
                    pdf.line(left, state["y"] + 1.5, left + sum(widths), state["y"] + 1.5)
                    state["y"] -= 2
            space(8)
    pdf.showPage()
    pdf.save()


def document_text(doc: dict) -> str:
    lines = [doc["title"]]
    for kind, text in doc["blocks"]:
        lines += [" | ".join(row) for row in text] if kind == "table" else [text]
    return "\n".join(lines)


def questions() -> list[dict]:
    """Every question with its split, checked against the documents: a gold answer the gold document does not
    contain is a mistake in this file."""
    by_id = {d["id"]: d for d in DOCUMENTS}
    rows: list[dict] = []
    for doc_id, items in BY_DOCUMENT.items():
        text = document_text(by_id[doc_id])
        for n, (category, question, answers, *also) in enumerate(items, 1):
            if not any(a in text for a in answers):  # alternatives may be paraphrases; one must be the text's
                raise SystemExit(f"{doc_id} {question!r}: none of {answers} is in the document")
            # A question another document answers too (in its own words): that document is gold as well.
            others = also[0] if also else []
            for other in others:
                if not any(a in document_text(by_id[other]) for a in answers):
                    raise SystemExit(f"{doc_id} {question!r}: none of {answers} is in {other}")
            rows.append({"id": f"{doc_id}-{n:02d}", "split": split_of(doc_id), "category": category,
                         "question": question, "answers": answers,
                         "documents": [filename(by_id[d]) for d in (doc_id, *others)]})
    for n, question in enumerate(UNANSWERABLE, 1):
        rows.append({"id": f"none-{n:02d}", "split": split_of(question), "category": "unanswerable",
                     "question": question, "answers": [], "documents": []})
    for n, turns in enumerate(CONVERSATIONS, 1):
        split = split_of(turns[0][2] or turns[0][0])
        for t, (question, answers, doc_id) in enumerate(turns, 1):
            if doc_id:
                if not any(a in document_text(by_id[doc_id]) for a in answers):
                    raise SystemExit(f"conversation {n} {question!r}: none of {answers} is in {doc_id}")
            rows.append({"id": f"conv-{n:02d}-{t}", "split": split, "category": "followup",
                         "conversation": f"conv-{n:02d}", "turn": t, "question": question, "answers": answers,
                         "documents": [filename(by_id[doc_id])] if doc_id else []})
    for n, statement in enumerate(STATEMENTS, 1):
        rows.append({"id": f"say-{n:02d}", "split": split_of(statement), "category": "statement",
                     "question": statement, "answers": [], "documents": []})
    for n, (said, question, answers) in enumerate(RECALLS, 1):
        rows.append({"id": f"recall-{n:02d}", "split": split_of(question), "category": "recall",
                     "question": question, "answers": answers, "documents": [], "history": [said]})
    return rows


def main() -> None:
    out = HERE / "docs"
    out.mkdir(exist_ok=True)
    for doc in DOCUMENTS:
        path = out / filename(doc)
        if doc["format"] == "docx":
            write_docx(doc, path)
        elif doc["format"] == "pdf":
            write_pdf(doc, path)
        else:
            render = {"md": render_md, "txt": render_txt, "html": render_html}[doc["format"]]
            path.write_text(render(doc), encoding="utf-8")
    rows = questions()
    with (HERE / "questions.jsonl").open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    splits = {s: sum(r["split"] == s for r in rows) for s in ("tune", "check")}
    print(f"{len(DOCUMENTS)} documents, {len(rows)} questions {splits}")


if __name__ == "__main__":
    main()

"""Build the development corpus: documents (.md, .txt, .html, .docx) under docs/ and questions.jsonl.

Run: .venv/bin/python eval/corpus/build.py   (deterministic apart from the .docx zip timestamps)

Every question line: {"id", "split", "category", "question", "answers", "documents"}; a conversation's
turns share a "conversation" id and carry their "turn" number. The split ("tune" or "check") is fixed by a
hash of the gold document (of the first turn's document for a conversation, of the text where there is no
document), so that tuning never sees a check document's questions.
"""
from __future__ import annotations

import hashlib
import html
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from documents import DOCUMENTS  # noqa: E402
from questions_data import BY_DOCUMENT, CONVERSATIONS, STATEMENTS, UNANSWERABLE  # noqa: E402

SUFFIX = {"md": ".md", "txt": ".txt", "html": ".html", "docx": ".docx"}


def split_of(key: str) -> str:
    return "tune" if hashlib.sha1(key.encode("utf-8")).digest()[0] % 2 == 0 else "check"


def filename(doc: dict) -> str:
    return doc["id"] + SUFFIX[doc["format"]]


def render_md(doc: dict) -> str:
    lines = [f"# {doc['title']}", ""]
    for kind, text in doc["blocks"]:
        lines += [f"## {text}", ""] if kind == "h" else [f"- {text}"] if kind == "li" else [text, ""]
    return "\n".join(lines).replace("\n\n\n", "\n\n").rstrip() + "\n"


def render_txt(doc: dict) -> str:
    lines, number = [doc["title"], ""], 0
    for kind, text in doc["blocks"]:
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
        else:
            document.add_paragraph(text)
    document.save(str(path))


def document_text(doc: dict) -> str:
    return doc["title"] + "\n" + "\n".join(text for _, text in doc["blocks"])


def questions() -> list[dict]:
    """Every question with its split, checked against the documents: a gold answer the gold document does not
    contain is a mistake in this file."""
    by_id = {d["id"]: d for d in DOCUMENTS}
    rows: list[dict] = []
    for doc_id, items in BY_DOCUMENT.items():
        text = document_text(by_id[doc_id])
        for n, (category, question, answers) in enumerate(items, 1):
            if not any(a in text for a in answers):  # alternatives may be paraphrases; one must be the text's
                raise SystemExit(f"{doc_id} {question!r}: none of {answers} is in the document")
            rows.append({"id": f"{doc_id}-{n:02d}", "split": split_of(doc_id), "category": category,
                         "question": question, "answers": answers, "documents": [filename(by_id[doc_id])]})
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
    return rows


def main() -> None:
    out = HERE / "docs"
    out.mkdir(exist_ok=True)
    for doc in DOCUMENTS:
        path = out / filename(doc)
        if doc["format"] == "docx":
            write_docx(doc, path)
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

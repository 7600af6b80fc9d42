"""Answers from documents as teams have them: per format, answer-hit offline, whether the cited chunk's
`location` names the right page, sheet row or slide, OCR character accuracy, and a 100-page PDF end to end.

Run: .venv/bin/python -m bench.formats_answer_bench [--seeds 1 2] [--pdf-pages 100] [--skip-long-pdf]
         [--out bench/formats_answer_bench.json] [--smoke]
(--smoke: seed 1's CSV document only, no OCR figure, a 1-page PDF end to end.)
(the run migrates and ingests into a new temporary data dir: earlier documents would answer its questions.)

Every file is generated from a seed: which facts (subject, kind of fact, value, responsible department), their
order, the sheet and table layouts and where a number wraps at a line end all change with it, so one seed's
files are unseen by another's. A seed's documents state each subject once (no two documents contradict each
other) and are deleted before the next seed's are ingested. Report seed 1 as the tuning half and seed 2 as
the check half; no parser or answer rule may be tuned on the check seed. Offline answers (no model key): the
figure is what a team without a model gets. Writes JSON and prints it.
"""
from __future__ import annotations

import argparse
import io
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import docx
import numpy
from reportlab.lib.utils import ImageReader

from bench.common import ROOT, arguments, setup_django, write_json
from bench.formats_bench import text_pdf
from tests.kb.ingestion.files import _canvas, pptx_bytes, text_image, xlsx_bytes

SMOKE_FORMATS = ("csv",)

SUBJECTS = ["访客登记", "差旅报销", "服务器巡检", "合同归档", "设备借用", "会议室预订", "数据备份", "新员工培训",
            "采购审批", "门禁卡补办", "年度体检", "加班申请", "印章使用", "样品寄送", "客户回访", "库存盘点",
            "发票核验", "机房值班", "软件授权", "档案借阅", "车辆调度", "保密检查", "供应商评估", "固定资产清点"]
DEPARTMENTS = ["行政部", "财务部", "信息技术部", "法务部", "人力资源部", "采购部", "质量管理部", "安全保卫部"]
# (statement, question, answer) per kind of fact; {s} subject, {n} number, {d} department.
KINDS = [
    ("{s}须在{n}个工作日内完成。", "{s}须在几个工作日内完成？", "{n}个工作日"),
    ("{s}的费用上限为每次{n}元。", "{s}每次的费用上限是多少？", "{n}元"),
    ("{s}每{n}天进行一次。", "{s}多久进行一次？", "{n}天"),
    ("{s}由{d}负责。", "{s}由哪个部门负责？", "{d}"),
    ("{s}的记录至少保存{n}个月。", "{s}的记录要保存多久？", "{n}个月"),
]
ITEMS = ["打印纸", "硒鼓", "显示器", "工位椅", "笔记本电脑", "投影仪", "白板", "碎纸机", "路由器", "移动硬盘",
         "扫描仪", "电话机", "文件柜", "空气净化器", "饮水机", "会议平板"]
FILLER = ["本规定适用于公司全体员工及外包人员。", "如有疑问，请联系相关部门。", "本制度自发布之日起施行。",
          "各部门应指定专人负责日常执行。", "执行情况纳入年度考核。", "特殊情况须经分管领导书面批准。"]


@dataclass
class Fact:
    statement: str
    question: str
    answer: str
    where: dict = field(default_factory=dict)  # the location the citation should name: page / sheet+row / slide


@dataclass
class Doc:
    name: str
    fmt: str
    data: bytes
    facts: list[Fact]


class Facts:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.subjects = rng.sample(SUBJECTS, len(SUBJECTS))
        self.serials = iter(rng.sample(range(10, 99), 89))

    def serial(self) -> int:
        return next(self.serials)

    def next(self, kind: int | None = None) -> Fact:
        subject = self.subjects.pop()
        statement, question, answer = KINDS[self.rng.randrange(len(KINDS)) if kind is None else kind]
        values = {"s": subject, "n": str(self.rng.choice([3, 5, 7, 10, 12, 15, 18, 24, 30, 45, 60, 90, 120,
                                                           180, 200, 350, 500, 800, 1200, 2500])),
                  "d": self.rng.choice(DEPARTMENTS)}
        return Fact(statement.format(**values), question.format(**values), answer.format(**values))


# -- files ---------------------------------------------------------------------------------------------------
def _pdf_canvas():
    return _canvas()


def _furniture(pdf, title: str, number: int) -> None:
    pdf.setFont("STSong-Light", 9)
    pdf.drawString(50, 815, title)
    pdf.drawCentredString(297, 25, f"第 {number} 页")


def _wrap(text: str, width: int, rng: random.Random) -> list[str]:
    """Lines of at most `width` characters; the line holding the first number ends inside it or right after
    it, so that the number (or its unit) wraps at a line end as it does in real layouts."""
    digits = [i for i, ch in enumerate(text) if ch.isdigit()]
    first = digits[0] if digits else -1
    last = first
    while last + 1 < len(text) and text[last + 1].isdigit():
        last += 1
    lines, start = [], 0
    while start < len(text):
        end = min(start + width, len(text))
        if start <= first < end:
            end = min(end, rng.randint(first + 1, last + 1))
        lines.append(text[start:end])
        start = end
    return lines


def two_column_pdf(facts: Facts, rng: random.Random, name: str) -> Doc:
    """Page 1 two columns with wrapped numbers; page 2 prose and a ruled table; page 3 prose. Running header
    and page numbers on every page."""
    pdf, buffer = _pdf_canvas()
    title = rng.choice(["运维手册 内部资料", "管理制度汇编", "员工手册（试行）"])
    found: list[Fact] = []
    _furniture(pdf, title, 1)
    pdf.setFont("STSong-Light", 11)
    for column_x in (50, 320):
        fact = facts.next()
        fact.where = {"page": 1}
        found.append(fact)
        lines = _wrap(rng.choice(FILLER) + fact.statement + rng.choice(FILLER), 20, rng)
        for index, line in enumerate(lines):
            pdf.drawString(column_x, 760 - 16 * index, line)
    pdf.showPage()
    _furniture(pdf, title, 2)
    pdf.setFont("STSong-Light", 11)
    pdf.drawString(50, 770, rng.choice(FILLER) + "各事项标准如下表所示。")
    rows = [facts.next(kind=2) for _ in range(3)]
    header = ["事项", "周期", "负责部门"]
    table = [header] + [[f.statement.split("每")[0], f.answer, rng.choice(DEPARTMENTS)] for f in rows]
    for i, row in enumerate(table):
        for j, cell in enumerate(row):
            pdf.rect(50 + 150 * j, 740 - 22 * (i + 1), 150, 22)
            pdf.drawString(55 + 150 * j, 747 - 22 * (i + 1), cell)
    picked = rng.choice(rows)
    picked.where = {"page": 2}
    found.append(picked)
    pdf.drawString(50, 620, "表格之后的说明：" + rng.choice(FILLER))
    pdf.showPage()
    _furniture(pdf, title, 3)
    pdf.setFont("STSong-Light", 11)
    fact = facts.next()
    fact.where = {"page": 3}
    found.append(fact)
    for index, line in enumerate(_wrap(rng.choice(FILLER) + fact.statement, 38, rng)):
        pdf.drawString(50, 760 - 16 * index, line)
    pdf.showPage()
    pdf.save()
    return Doc(name, "pdf", buffer.getvalue(), found)


def _text_image(lines: list[str], rng: random.Random):
    return text_image(lines, size=rng.choice([34, 40, 46]))


def scanned_pdf(facts: Facts, rng: random.Random, name: str) -> Doc:
    """Two pages holding only pictures of text, as a scanner makes them."""
    pdf, buffer = _pdf_canvas()
    found = []
    for page in (1, 2):
        fact = facts.next()
        fact.where = {"page": page}
        found.append(fact)
        image = _text_image([rng.choice(FILLER), fact.statement, rng.choice(FILLER)], rng)
        scale = 495 / image.width
        pdf.drawImage(ImageReader(image), 50, 760 - image.height * scale, image.width * scale, image.height * scale)
        pdf.showPage()
    pdf.save()
    return Doc(name, "pdf", buffer.getvalue(), found)


def png_image(facts: Facts, rng: random.Random, name: str) -> Doc:
    found = [facts.next(), facts.next()]
    image = _text_image([found[0].statement, rng.choice(FILLER), found[1].statement], rng)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return Doc(name, "png", buffer.getvalue(), found)


def _sheet_rows(facts: Facts, rng: random.Random, count: int) -> tuple[list[list], list[Fact]]:
    """A price list: item and model (unique in the corpus), unit price, delivery time, buying department."""
    header = ["物品", "型号", "单价（元）", "供货周期", "采购部门"]
    rows, asked = [header], []
    for n in range(count):
        item, model = rng.choice(ITEMS), f"{rng.choice('ABCDHKMPTX')}{rng.randint(100, 999)}-{facts.serial()}"
        price, days, dept = rng.choice([80, 150, 260, 480, 900, 1500]) + n, rng.choice([2, 3, 5, 7, 10]), \
            rng.choice(DEPARTMENTS)
        rows.append([item, model, price, f"{days}天", dept])
        if n in (2, count // 2, count - 2):
            asked.append(Fact(f"{item}{model}单价{price}", f"型号{model}的{item}单价是多少？", str(price),
                              {"row": len(rows)}))
    return rows, asked


def xlsx_sheet(facts: Facts, rng: random.Random, name: str) -> Doc:
    sheet = rng.choice(["费用标准", "价格表", "办理时限"])
    rows, asked = _sheet_rows(facts, rng, rng.randint(12, 30))
    other, _ = _sheet_rows(facts, rng, 5)
    for fact in asked:
        fact.where = {"sheet": sheet, **fact.where}
    return Doc(name, "xlsx", xlsx_bytes({"说明": [["本表为内部资料"]], sheet: rows, "附表": other}), asked)


def csv_sheet(facts: Facts, rng: random.Random, name: str) -> Doc:
    rows, asked = _sheet_rows(facts, rng, rng.randint(12, 30))
    text = "\n".join(",".join(str(v) for v in row) for row in rows)
    return Doc(name, "csv", text.encode("utf-8"), asked)


def slides(facts: Facts, rng: random.Random, name: str) -> Doc:
    deck, found = [{"title": rng.choice(["季度工作汇报", "制度宣讲", "新流程介绍"]), "body": rng.choice(FILLER)}], []
    for number in (2, 3, 4):
        fact = facts.next()
        fact.where = {"slide": number}
        found.append(fact)
        spec = {"title": fact.statement.split("须")[0].split("的")[0].split("每")[0].split("由")[0]}
        if number == 4:
            spec.update(body=rng.choice(FILLER), notes=fact.statement)  # the fact only in the speaker notes
        else:
            spec["body"] = rng.choice(FILLER) + "\n" + fact.statement
        deck.append(spec)
    return Doc(name, "pptx", pptx_bytes(deck), found)


def word(facts: Facts, rng: random.Random, name: str) -> Doc:
    document = docx.Document()
    before, after = facts.next(), facts.next()
    document.add_paragraph(rng.choice(FILLER) + before.statement)
    rows = [facts.next(kind=1) for _ in range(3)]
    table = document.add_table(rows=4, cols=2)
    for i, row in enumerate([["事项", "每次费用上限"]] + [[f.statement.split("的")[0], f.answer] for f in rows]):
        for j, value in enumerate(row):
            table.cell(i, j).text = value
    document.add_paragraph(after.statement + rng.choice(FILLER))
    buffer = io.BytesIO()
    document.save(buffer)
    return Doc(name, "docx", buffer.getvalue(), [before, rng.choice(rows), after])


def html_page(facts: Facts, rng: random.Random, name: str) -> Doc:
    found = [facts.next(), facts.next(kind=4)]
    nav = "".join(f"<a href='/{i}'>{s}</a>" for i, s in enumerate(rng.sample(SUBJECTS, 6)))
    body = (f"<html><head><title>制度</title></head><body><nav>{nav}</nav><main><h1>管理办法</h1>"
            f"<p>{rng.choice(FILLER)}{found[0].statement}</p><table><tr><th>事项</th><th>保存期限</th></tr>"
            f"<tr><td>{found[1].statement.split('的')[0]}</td><td>{found[1].answer}</td></tr></table>"
            f"<p>{rng.choice(FILLER)}</p></main><footer>版权所有 联系我们 {rng.choice(DEPARTMENTS)}</footer>"
            "</body></html>")
    return Doc(name, "html", body.encode("utf-8"), found)


MAKERS = {"pdf": two_column_pdf, "scanned pdf": scanned_pdf, "png": png_image, "xlsx": xlsx_sheet,
          "csv": csv_sheet, "pptx": slides, "docx": word, "html": html_page}


def corpus(seed: int, formats: tuple[str, ...] | None = None) -> list[Doc]:
    """A seed's documents, one per format (only `formats` if given: a smoke run's facts differ from the full set's)."""
    rng = random.Random(seed)
    facts = Facts(rng)
    docs = []
    for label, make in MAKERS.items():
        if formats is not None and label not in formats:
            continue
        ext = "pdf" if label == "scanned pdf" else label
        docs.append(make(facts, rng, f"s{seed}-{label.replace(' ', '-')}.{ext}"))
    return docs


# -- measuring -------------------------------------------------------------------------------------------------
def location_right(where: dict, location: dict | None) -> bool | None:
    """None where the format has no location to check (images, HTML, Word)."""
    if not where:
        return None
    if location is None:
        return False
    if "page" in where:
        return location.get("page") == where["page"]
    if "slide" in where:
        return location.get("slide") == where["slide"]
    if "row" in where:
        rows = location.get("rows") or []
        in_rows = bool(rows) and rows[0] <= where["row"] <= rows[-1]
        return in_rows and location.get("sheet") == where.get("sheet", location.get("sheet"))
    return None


def ask_all(docs: list[Doc], workdir: Path) -> list[dict]:
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from chat.evaluation.runner import Asker, eval_user, ingest_files
    from chat.evaluation.scoring import EvalQuestion, normalise
    from kb.models import Document
    from kb.services import document_delete

    paths = []
    for doc in docs:
        path = workdir / doc.name
        path.write_bytes(doc.data)
        paths.append(path)
    ids = ingest_files(paths, domain="formats-bench")
    names = {v: k for k, v in ids.items()}
    asker = Asker(user=eval_user("formats-bench"), names_by_id=names)
    rows = []
    for doc in docs:
        for n, fact in enumerate(doc.facts):
            outcome = asker.ask(EvalQuestion(id=f"{doc.name}-{n}", question=fact.question, category=doc.fmt,
                                             answers=(fact.answer,), documents=(doc.name,)))
            own = [c for c in outcome.citations if names.get(c.get("document_id")) == doc.name]
            located = location_right(fact.where, own[0].get("location") if own else None)
            rows.append({"doc": doc.name, "question": fact.question, "expected": fact.answer,
                         "hit": normalise(fact.answer) in normalise(outcome.answer),
                         "cites_doc": bool(own), "flagged": outcome.flagged, "band": outcome.band,
                         "where": fact.where, "location": own[0].get("location") if own else None,
                         "location_right": located, "answer": outcome.answer[:300], "error": outcome.error})
    for document in Document.objects.filter(pk__in=ids.values()):
        document_delete(document=document)
    return rows


def per_format(rows: list[dict], docs: list[Doc]) -> dict:
    fmt_of = {d.name: ("scanned pdf" if "scanned" in d.name else d.fmt) for d in docs}
    out: dict[str, dict] = {}
    for fmt in dict.fromkeys(fmt_of.values()):
        mine = [r for r in rows if fmt_of[r["doc"]] == fmt]
        located = [r["location_right"] for r in mine if r["location_right"] is not None and r["cites_doc"]]
        out[fmt] = {"n": len(mine), "answer_hit": round(sum(r["hit"] for r in mine) / len(mine), 3),
                    "cites_doc": round(sum(r["cites_doc"] for r in mine) / len(mine), 3),
                    "wrong_unflagged": sum(1 for r in mine if not r["hit"] and not r["flagged"]),
                    "location_right": round(sum(located) / len(located), 3) if located else None,
                    "location_checked": len(located)}
    everything = [r for r in rows]
    located = [r["location_right"] for r in everything if r["location_right"] is not None and r["cites_doc"]]
    out["all"] = {"n": len(everything), "answer_hit": round(sum(r["hit"] for r in everything) / len(everything), 3),
                  "location_right": round(sum(located) / len(located), 3) if located else None,
                  "location_checked": len(located)}
    return out


def _distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def ocr_accuracy(seed: int, count: int = 12) -> dict:
    """Character accuracy (1 − edit distance / length, spaces ignored) of clean rendered Chinese lines, by the
    product's recogniser (tesseract) and, where installed, rapidocr on the same images (`pip install
    rapidocr-onnxruntime`: not pinned, requirements-bench.txt says why)."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from kb.ingestion.parsers import ParseError, parse_located

    rng = random.Random(seed * 1000 + 7)
    facts = Facts(rng)
    lines = [facts.next().statement + rng.choice(FILLER) for _ in range(count)]
    images = []
    for index in range(0, count, 3):
        image = _text_image(lines[index:index + 3], rng)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        images.append(("".join(lines[index:index + 3]), buffer.getvalue(), image))
    result: dict = {}
    for engine in ("tesseract", "rapidocr"):
        errors = chars = failed = 0
        started = time.perf_counter()
        try:
            for reference, data, image in images:
                try:
                    text = parse_located(data, "png").text if engine == "tesseract" else _rapidocr(image)
                except ParseError:
                    failed, text = failed + 1, ""  # counted as every character missed
                hypothesis = "".join(text.split())
                errors += _distance(reference, hypothesis)
                chars += len(reference)
        except ImportError as exc:
            result[engine] = {"skipped": f"not installed ({exc.name})"}
            continue
        result[engine] = {"char_accuracy": round(1 - errors / chars, 4), "chars": chars, "failed_images": failed,
                          "seconds_per_image": round((time.perf_counter() - started) / len(images), 2)}
    return result


_RAPID = None


def _rapidocr(image) -> str:
    global _RAPID
    if _RAPID is None:
        # optional: rapidocr-onnxruntime is installed by hand (requirements-bench.txt); its absence is reported
        from rapidocr_onnxruntime import RapidOCR

        _RAPID = RapidOCR()

    found, _ = _RAPID(numpy.array(image.convert("RGB")))
    return "".join(item[1] for item in (found or []))


def long_pdf(pages: int, workdir: Path) -> dict:
    """A `pages`-page text PDF from upload to searchable, in this process (parse child, chunk, embed, index)."""
    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from chat.evaluation.runner import ingest_files
    from kb.models import Document

    path = workdir / f"long-{pages}-pages.pdf"
    path.write_bytes(text_pdf(pages))
    started = time.perf_counter()
    ids = ingest_files([path], domain="formats-bench-long")
    seconds = time.perf_counter() - started
    document = Document.objects.get(pk=ids[path.name])
    return {"pages": pages, "seconds": round(seconds, 1), "status": document.status,
            "chunks": document.chunks.count()}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]),
                       out_default=str(ROOT / "bench" / "formats_answer_bench.json"))
    parser.add_argument("--seeds", type=int, nargs="*", default=[1, 2], help="none: only the long PDF")
    parser.add_argument("--pdf-pages", type=int, default=100)
    parser.add_argument("--skip-long-pdf", action="store_true")
    args = parser.parse_args(argv)
    if args.smoke:
        args.seeds, args.pdf_pages = [1], 1
    if os.environ.get("OPENAI_API_KEY"):
        sys.exit("unset OPENAI_API_KEY: this bench measures the offline answers")
    with tempfile.TemporaryDirectory() as tmp:
        setup_django(data_dir=Path(tmp) / "data", offline=False)
        report: dict = {"seeds": {}}
        for seed in args.seeds:
            docs = corpus(seed, SMOKE_FORMATS if args.smoke else None)
            rows = ask_all(docs, Path(tmp))
            report["seeds"][str(seed)] = {"formats": per_format(rows, docs),
                                          "ocr": {} if args.smoke else ocr_accuracy(seed), "rows": rows}
            write_json(report, args.out, echo=False)  # after each seed: a long run interrupted later keeps it
        if not args.skip_long_pdf:
            report["long_pdf"] = long_pdf(args.pdf_pages, Path(tmp))
    summary = {seed: {"formats": part["formats"], "ocr": part["ocr"]} for seed, part in report["seeds"].items()}
    write_json(report, args.out, echo={**summary, "long_pdf": report.get("long_pdf")})


if __name__ == "__main__":
    main()

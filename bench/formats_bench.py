"""Parse throughput per format, and the cost of refusing bad input, through the worker's parser path.

Run: .venv/bin/python -m bench.formats_bench [--pdf-pages 100] [--out bench/formats_bench.json] [--smoke]

Every file is generated here. "throughput" runs parse_located in this process (warm imports, best of
`--repeat`); "bad input" sends each hostile file through IsolatedParser with the default limits and
reports how it ended and how long it took. Writes JSON (and prints it).
"""
from __future__ import annotations

import argparse
import time

from bench.common import ROOT, arguments, write_json
from tests.kb.ingestion.files import (
    _canvas,
    blank_pdf,
    docx_with_table,
    password_pdf,
    png_bytes,
    png_declaring,
    pptx_bytes,
    scanned_text_pdf,
    text_image,
    two_column_pdf,
    xlsx_bytes,
)

_LINE = "系统在每天凌晨两点执行全量备份，备份数据保留三十天，过期数据由清理任务自动删除。第{n}行"


def text_pdf(pages: int, *, columns: int = 1) -> bytes:
    pdf, buffer = _canvas()
    for page in range(pages):
        pdf.setFont("STSong-Light", 9)
        pdf.drawString(50, 815, "运维手册 内部资料")
        pdf.drawCentredString(297, 25, f"第 {page + 1} 页")
        pdf.setFont("STSong-Light", 10.5 if columns == 1 else 9)
        width = 495 // columns
        for column in range(columns):
            for row in range(44):
                text = _LINE.format(n=row) if columns == 1 else _LINE.format(n=row)[:22]
                pdf.drawString(50 + column * width, 780 - 16 * row, text)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def _files(pdf_pages: int, *, smoke: bool = False) -> dict[str, tuple[bytes, str, int]]:
    """name → (data, type, units), units being pages, rows or slides for the per-unit rate; `smoke`: three small
    files of cheap kinds."""
    if smoke:
        return {f"pdf, one column ({pdf_pages} pages)": (text_pdf(pdf_pages), "pdf", pdf_pages),
                "csv (50 rows)": ("\n".join(f"{i},商品{i},{i * 3.5}" for i in range(50)).encode(), "csv", 50),
                "html (20 paragraphs)": (("<html><body>" + "".join(f"<p>{_LINE.format(n=i)}</p>" for i in range(20))
                                          + "</body></html>").encode(), "html", 1)}

    rows = [["编号", "名称", "价格", "说明"]] + [[i, f"商品{i}", i * 3.5, "库存充足，当天发货"] for i in range(5000)]
    csv_text = "\n".join(",".join(str(v) for v in row) for row in rows)
    html = ("<html><body><nav>首页 产品</nav><main>" + "".join(f"<p>{_LINE.format(n=i)}</p>" for i in range(2000))
            + "</main><footer>版权</footer></body></html>")
    return {
        f"pdf, one column ({pdf_pages} pages)": (text_pdf(pdf_pages), "pdf", pdf_pages),
        f"pdf, two columns ({pdf_pages} pages)": (text_pdf(pdf_pages, columns=2), "pdf", pdf_pages),
        "pdf with a ruled table (2 pages)": (two_column_pdf(), "pdf", 2),
        "xlsx (5,000 rows)": (xlsx_bytes({"商品": rows}), "xlsx", 5000),
        "csv (5,000 rows)": (csv_text.encode(), "csv", 5000),
        "pptx (200 slides)": (pptx_bytes([{"title": f"第{i}页", "body": _LINE.format(n=i), "notes": "备注"}
                                          for i in range(200)]), "pptx", 200),
        "docx with a table": (docx_with_table(_LINE * 200, [["a", "b"], ["1", "2"]], "尾"), "docx", 1),
        "html (2,000 paragraphs)": (html.encode(), "html", 1),
        "png, OCR (1 image)": (png_bytes(text_image([_LINE.format(n=1)[:20], "Backups run nightly."])), "png", 1),
        "scanned pdf, OCR (1 page)": (scanned_text_pdf([_LINE.format(n=1)[:20]]), "pdf", 1),
    }


def _bad_files(*, smoke: bool = False) -> dict[str, tuple[bytes, str]]:
    if smoke:
        return {"password-protected pdf": (password_pdf(), "pdf")}
    big_csv = "a,b,c\n" + "\n".join(f"{i},{i * 2},行{i}" for i in range(50_000))
    return {
        "password-protected pdf": (password_pdf(), "pdf"),
        "2,000-page text pdf": (text_pdf(2000), "pdf"),
        "1,000-page text pdf (at the page limit)": (text_pdf(1000), "pdf"),
        "6,000-page blank pdf": (blank_pdf(6000), "pdf"),
        "50,000-row csv": (big_csv.encode(), "csv"),
        "100-megapixel png": (png_declaring(10_000, 10_000), "png"),
    }


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]),
                       out_default=str(ROOT / "bench" / "formats_bench.json"))
    parser.add_argument("--pdf-pages", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--skip-bad", action="store_true")
    args = parser.parse_args(argv)
    if args.smoke:
        args.pdf_pages, args.repeat = 1, 1

    # apps not ready: the project loads only after setup_django() has set up this run's Django
    from kb.ingestion.parsers import ParseError, parse_located
    from kb.ingestion.parsers.isolated import IsolatedParser

    results: dict = {"throughput": {}, "bad_input": {}}
    for name, (data, kind, units) in _files(args.pdf_pages, smoke=args.smoke).items():
        best = None
        outcome = ""
        for _ in range(args.repeat):
            start = time.perf_counter()
            try:
                parsed = parse_located(data, kind)
                outcome = f"ok, {len(parsed.text):,} chars, {len(parsed.spans):,} located spans"
            except ParseError as exc:
                outcome = f"refused: {exc}"
            seconds = time.perf_counter() - start
            best = seconds if best is None else min(best, seconds)
        results["throughput"][name] = {"seconds": round(best, 3), "units": units,
                                       "units_per_second": round(units / best, 1), "bytes": len(data),
                                       "outcome": outcome[:160]}
        print(name, results["throughput"][name], flush=True)
    if not args.skip_bad:
        isolated = IsolatedParser()
        for name, (data, kind) in _bad_files(smoke=args.smoke).items():
            start = time.perf_counter()
            try:
                parsed = isolated(data, kind)
                outcome = f"ok, {len(parsed.text):,} chars"
            except ParseError as exc:
                outcome = f"refused: {exc}"
            results["bad_input"][name] = {"seconds": round(time.perf_counter() - start, 2), "outcome": outcome[:200]}
            print(name, results["bad_input"][name], flush=True)
    write_json(results, args.out)


if __name__ == "__main__":
    main()

"""Hostile and normal files through the parser: time and peak memory of the worker process, old vs new path.

Run: .venv/bin/python -m bench.parse_bench [--bomb-paragraphs 4000000] [--skip-baseline] [--out result.json]
     [--smoke]   (--smoke: a small bomb through the isolated path only)

"baseline" is what the worker did before parsing was bounded and isolated: the same extraction
(parse_document with every bound lifted) in the worker's own process. "isolated" is the worker's path
now: IsolatedParser with the default limits. Each measurement runs in a fresh interpreter, so
the peak RSS printed is that of a worker that parsed only this one file.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, arguments, write_json
from tests.kb.ingestion.files import docx_bytes, docx_with_paragraphs


def _files(bomb_paragraphs: int) -> dict[str, tuple[bytes, str]]:
    normal = docx_bytes(*(f"第{i}段：知识库系统把文档切分为父块和子块，子块用于检索。" for i in range(2000)))
    return {
        f"docx bomb ({bomb_paragraphs:,} empty paragraphs)": (docx_with_paragraphs(bomb_paragraphs), "docx"),
        "normal docx (2,000 paragraphs)": (normal, "docx"),
        "normal txt (60 KB)": (("知识库系统把文档切分为父块和子块。" * 1200).encode("utf-8"), "txt"),
    }


def _measure(mode: str, path: str, file_type: str) -> dict:
    data = Path(path).read_bytes()
    start = time.perf_counter()
    outcome = "ok"
    try:
        if mode == "baseline":
            # apps not ready: the project loads only after setup_django() has set up this run's Django
            from kb.ingestion.parsers import ParseLimits, parse_document

            unbounded = ParseLimits(max_chars=10**12, max_pages=10**9, max_paragraphs=10**12,
                                    max_unzipped_bytes=10**15, max_zip_members=10**9, max_zip_ratio=1e12,
                                    max_rows=10**12, max_cells=10**12, max_slides=10**9)
            text = parse_document(data, file_type, limits=unbounded)
        else:
            # apps not ready: the project loads only after setup_django() has set up this run's Django
            from kb.ingestion.parsers.isolated import IsolatedParser

            text = IsolatedParser()(data, file_type).text
        outcome = f"ok, {len(text):,} chars"
    except Exception as exc:  # the refusal is the result being measured
        outcome = f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - start
    # VmHWM belongs to this process image; ru_maxrss would include the parent's before exec.
    peak_kb = int(Path("/proc/self/status").read_text().split("VmHWM:")[1].split()[0])
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"seconds": round(seconds, 3), "worker_peak_rss_mb": round(peak_kb / 1024),
            "child_peak_rss_mb": round(child_kb / 1024) if mode == "isolated" else None, "outcome": outcome[:120]}


def main(argv: list[str] | None = None) -> None:
    parser = arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    parser.add_argument("--bomb-paragraphs", type=int, default=4_000_000)
    parser.add_argument("--skip-baseline", action="store_true")
    parser.add_argument("--one", nargs=3, metavar=("MODE", "PATH", "TYPE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(_measure(*args.one)))
        return

    workdir = Path(tempfile.mkdtemp(prefix="docmind-parse-bench-"))
    modes = ["isolated"] if args.skip_baseline or args.smoke else ["baseline", "isolated"]
    files = _files(1000 if args.smoke else args.bomb_paragraphs)
    if args.smoke:
        files = dict(list(files.items())[:1])
    rows = []
    for index, (name, (data, file_type)) in enumerate(files.items()):
        path = workdir / f"{index}.{file_type}"
        path.write_bytes(data)
        for mode in modes:
            # A fresh interpreter per measurement: its peak RSS is that of a worker that parsed only this file.
            done = subprocess.run([sys.executable, "-m", "bench.parse_bench", "--one", mode, str(path), file_type],
                                  capture_output=True, text=True, check=True, cwd=ROOT)
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append({"file": name, "kb": round(len(data) / 1024), "path": mode, **row})
    write_json({"rows": rows}, args.out)


if __name__ == "__main__":
    main()

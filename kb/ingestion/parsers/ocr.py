"""Text recognition (OCR) for scanned PDF pages and images with Debian's tesseract (Apache-2.0; the Chinese
and English models ship in the tesseract-ocr-chi-sim / -eng packages), bounded in pages, pixels and time.

tesseract runs as a subprocess of the parsing child, so the child's address-space limit applies to it as
well; it dies with the child, has one thread and a deadline of its own.
"""
from __future__ import annotations

import csv
import ctypes
import io
import logging
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass

from kb.ingestion import reasons
from kb.ingestion.parsers.base import ParseError
from kb.ingestion.parsers.pdf_layout import is_cjk

logger = logging.getLogger(__name__)

LANGUAGES = "chi_sim+eng"
# Scans are rendered at this resolution: tesseract reads 10-point CJK reliably from about 200 dpi.
RENDER_DPI = 200
# Words recognised with less confidence than this (0–100) are noise more often than text.
_MIN_CONFIDENCE = 30


@dataclass
class OcrLine:
    text: str
    box: list[float]  # x0, top, x1, bottom in the caller's units


class OcrUnavailable(ParseError):
    """tesseract is not installed: a scan cannot be read on this server."""


class OcrBudget:
    """The seconds left for recognition in one document; pages past it are reported, not read."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def left(self) -> float:
        return self.deadline - time.monotonic()


def tesseract_path() -> str | None:
    return shutil.which("tesseract") or next((p for p in ("/usr/bin/tesseract", "/usr/local/bin/tesseract")
                                              if os.access(p, os.X_OK)), None)


def recognise(image, *, scale: float, budget: OcrBudget) -> list[OcrLine]:
    """Lines of text in a PIL image, boxes divided by `scale` (pixels per caller unit). Raises ParseError
    when tesseract is missing, fails or runs out of time.

    Page segmentation first looks for blocks of text; a page holding a single short line (a notice, a label,
    a photographed sign) has none to it, so an empty result is read once more as sparse text."""
    binary = tesseract_path()
    if binary is None:
        raise OcrUnavailable(reasons.OCR_NOT_INSTALLED)
    png = io.BytesIO()
    image.convert("L").save(png, format="PNG")
    lines = _lines(_tesseract(binary, png.getvalue(), budget, mode=PAGE_OF_BLOCKS), scale)
    if not lines:
        lines = _lines(_tesseract(binary, png.getvalue(), budget, mode=SPARSE_TEXT), scale)
    return lines


# tesseract --psm modes: 3 segments a page into blocks of text; 11 finds as much text as it can, in no order.
PAGE_OF_BLOCKS, SPARSE_TEXT = "3", "11"


def _tesseract(binary: str, png: bytes, budget: OcrBudget, *, mode: str) -> str:
    seconds = budget.left()
    if seconds <= 1:
        raise ParseError(reasons.OCR_OUT_OF_TIME)
    try:
        done = subprocess.run([binary, "stdin", "stdout", "-l", LANGUAGES, "--psm", mode, "tsv"],
                              input=png, capture_output=True, timeout=seconds, check=False,
                              env={"PATH": os.defpath, "OMP_THREAD_LIMIT": "1", "LANG": "C.UTF-8"},
                              preexec_fn=_die_with_parent)
    except subprocess.TimeoutExpired:
        raise ParseError(reasons.OCR_OUT_OF_TIME) from None
    if done.returncode != 0:
        # The reason stays in the log: tesseract's messages name paths and settings of the server.
        logger.warning("tesseract exited with %s: %s", done.returncode,
                       done.stderr.decode("utf-8", errors="replace").strip()[-300:])
        raise ParseError(reasons.OCR_FAILED)
    return done.stdout.decode("utf-8", errors="replace")


def _lines(tsv: str, scale: float) -> list[OcrLine]:
    lines: dict[tuple[str, str, str, str], list[dict]] = {}
    for row in csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE):
        text = (row.get("text") or "").strip()
        if row.get("level") != "5" or not text:
            continue
        try:
            if float(row["conf"]) < _MIN_CONFIDENCE:
                continue
            word = {"text": text, "x0": int(row["left"]), "top": int(row["top"]),
                    "x1": int(row["left"]) + int(row["width"]), "bottom": int(row["top"]) + int(row["height"])}
        except (KeyError, ValueError):
            continue
        lines.setdefault((row["page_num"], row["block_num"], row["par_num"], row["line_num"]), []).append(word)
    out = []
    for words in lines.values():
        text = words[0]["text"]
        for before, after in zip(words, words[1:], strict=False):
            # tesseract separates every CJK character by a space; Chinese has none.
            text += ("" if is_cjk(before["text"][-1]) or is_cjk(after["text"][0]) else " ") + after["text"]
        box = [min(w["x0"] for w in words) / scale, min(w["top"] for w in words) / scale,
               max(w["x1"] for w in words) / scale, max(w["bottom"] for w in words) / scale]
        out.append(OcrLine(text, [round(v, 1) for v in box]))
    return out


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass

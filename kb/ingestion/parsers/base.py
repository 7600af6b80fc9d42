"""What every parser shares: the refusal type, the supported file types and the bounds on one document."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from kb.ingestion import reasons

SUPPORTED_TYPES = ("txt", "md", "html", "htm", "pdf", "docx", "xlsx", "csv", "pptx", "png", "jpg", "jpeg")
MIB = 1024 * 1024
# Where a piece of text is in the original: {"page": 3, "boxes": [[x0, top, x1, bottom], …]} (PDF points from
# the page's top-left corner), {"sheet": "价格表", "rows": [4, 9]}, {"slide": 3}.
Location = dict


class ParseError(ValueError):
    """The file cannot become text; the message is shown to the user as the failure reason."""


class ParseInterrupted(RuntimeError):
    """The parse was stopped from outside (the service is shutting down), which says nothing about the file:
    the document goes back to the queue instead of failing."""


@dataclass(frozen=True)
class ParseLimits:
    """Bounds that keep one hostile or absurd file from taking the worker's memory and time.

    A real 1,000-page book is about 2 M characters, 30 k paragraphs and, as a .docx, a few
    tens of MB unpacked; text-heavy XML compresses about 5–15:1. The defaults leave a wide
    margin above that and stay far below what fills a server's memory.
    """

    max_chars: int = 10_000_000
    # Layout-aware PDF reading runs at about 20 text pages/s on a busy 2-core machine
    # (bench/formats_bench.py), so a longer PDF could not finish within the 120 s parse deadline
    # anyway: it is refused at once, by its page count, instead of after two minutes.
    max_pages: int = 1_000
    max_paragraphs: int = 300_000
    # Spreadsheet rows and cells read from one workbook or CSV: every row becomes text to embed, and at
    # about 15 chunks/s on a CPU 20,000 rows already take the worker most of an hour.
    max_rows: int = 20_000
    max_cells: int = 400_000
    max_slides: int = 2_000
    # Text recognition: scanned pages read per document, its seconds in all (the parse deadline, 120 s by
    # default, still bounds the whole), and the pixels of an image (a 100-megapixel photo is refused).
    max_ocr_pages: int = 50
    ocr_seconds: float = 90.0
    max_image_pixels: int = 40_000_000
    max_unzipped_bytes: int = 256 * MIB
    max_zip_members: int = 10_000
    # Compression ratio above which a zip member is a bomb; small members are exempt, since a
    # few KB of repeated markup legitimately compress far better than that.
    max_zip_ratio: float = 100.0
    zip_ratio_min_bytes: int = MIB

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value <= 0:
                raise ValueError(f"{name} must be positive")

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass
class ParsedText:
    """A document's text and, for the pieces whose place in the original is known, that place.

    `spans` holds (start, end, location) with offsets into `text`, in order and not overlapping.
    """

    text: str
    spans: list[tuple[int, int, Location]] = field(default_factory=list)
    # Parts of the file that could not be read although the rest could (pages without a text layer…).
    warnings: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"text": self.text, "spans": [list(span) for span in self.spans], "warnings": self.warnings}

    @classmethod
    def from_json(cls, data: dict) -> ParsedText:
        return cls(data["text"], [(int(s), int(e), loc) for s, e, loc in data.get("spans", [])],
                   list(data.get("warnings", [])))


class TextBuilder:
    """Builds a ParsedText block by block: each block is normalised on its own, so offsets stay exact."""

    def __init__(self, limits: ParseLimits) -> None:
        self.limits = limits
        self._parts: list[str] = []
        self._spans: list[tuple[int, int, Location]] = []
        self._length = 0

    def block(self, pieces: list[tuple[str, Location | None]] | str, location: Location | None = None) -> None:
        """One paragraph, heading or table, made of pieces (text, location) joined as given; blocks are separated
        by a blank line. A plain string is normalised as a whole (blank-line runs collapsed, ends trimmed)."""
        if isinstance(pieces, str):
            pieces = [(normalise_block(pieces), location)]
        pieces = [(_CONTROL.sub("", text.replace("\r", "")), loc) for text, loc in pieces]
        while pieces and not pieces[0][0].strip():
            pieces.pop(0)
        while pieces and not pieces[-1][0].strip():
            pieces.pop()
        if not pieces:
            return
        pieces[0] = (pieces[0][0].lstrip(), pieces[0][1])
        pieces[-1] = (pieces[-1][0].rstrip(), pieces[-1][1])
        if self._parts:
            self._add("\n\n", None)
        for text, loc in pieces:
            self._add(text, loc)

    def _add(self, text: str, location: Location | None) -> None:
        start = self._length
        self._parts.append(text)
        self._length += len(text)
        if self._length > self.limits.max_chars:
            raise ParseError(too_many_chars(self.limits))
        if location is not None and text:
            self._spans.append((start, self._length, location))

    @property
    def empty(self) -> bool:
        return not self._parts

    def build(self) -> ParsedText:
        return ParsedText("".join(self._parts), self._spans)


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def normalise_block(text: str) -> str:
    text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n").replace("\u00a0", " "))
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def too_many_chars(limits: ParseLimits) -> str:
    return reasons.TOO_MANY_CHARS % {"limit": f"{limits.max_chars:,}"}


def check_chars(text: str, limits: ParseLimits) -> str:
    if len(text) > limits.max_chars:
        raise ParseError(too_many_chars(limits))
    return text


def file_type_of(name: str) -> str:
    """Lower-case extension without the dot ('' when there is none)."""
    _, dot, ext = name.rpartition(".")
    return ext.lower() if dot else ""

"""What every parser shares: the refusal type, the supported file types and the bounds on one document."""
from __future__ import annotations

from dataclasses import asdict, dataclass

SUPPORTED_TYPES = ("txt", "md", "html", "htm", "pdf", "docx")
MIB = 1024 * 1024


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
    max_pages: int = 5_000
    max_paragraphs: int = 300_000
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


def check_chars(text: str, limits: ParseLimits) -> str:
    if len(text) > limits.max_chars:
        raise ParseError(f"the document has more than {limits.max_chars:,} characters of text; "
                         "split it into smaller files")
    return text


def file_type_of(name: str) -> str:
    """Lower-case extension without the dot ('' when there is none)."""
    _, dot, ext = name.rpartition(".")
    return ext.lower() if dot else ""

"""Zip containers (.docx, .pptx, .xlsx): declared sizes, ratios and member counts checked before anything is unpacked,
and what the reading library then fails on said as the container's reason."""
from __future__ import annotations

import io
import logging
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager

from kb.ingestion import reasons
from kb.ingestion.parsers.base import MIB, ParseError, ParseLimits

log = logging.getLogger(__name__)


def open_zip(data: bytes, *, limits: ParseLimits, kind: reasons.Container) -> zipfile.ZipFile:
    """The archive, once its central directory shows nothing that would unpack into a memory bomb.

    zipfile never yields more bytes for a member than its declared size (a member that inflates
    further fails its length/CRC check), so checking the declared sizes bounds what parsing reads.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        raise ParseError(kind.not_a_zip) from None
    if len(members) > limits.max_zip_members:
        raise ParseError(kind.too_many_parts % {"parts": f"{len(members):,}", "limit": f"{limits.max_zip_members:,}"})
    unpacked = sum(member.file_size for member in members)
    if unpacked > limits.max_unzipped_bytes:
        raise ParseError(kind.too_large % {"size": f"{unpacked / MIB:,.0f}",
                                           "limit": f"{limits.max_unzipped_bytes / MIB:,.0f}"})
    for member in members:
        if member.file_size < limits.zip_ratio_min_bytes:
            continue
        ratio = member.file_size / max(member.compress_size, 1)
        if ratio > limits.max_zip_ratio:
            raise ParseError(kind.zip_bomb % {"ratio": f"{ratio:,.0f}", "limit": f"{limits.max_zip_ratio:,.0f}"})
    return archive


@contextmanager
def reading(kind: reasons.Container) -> Iterator[None]:
    """Any failure of the library that reads `kind`'s parts (python-docx, python-pptx and openpyxl raise many types
    for a missing part or a file of another format) as `kind`'s unreadable reason; the exception itself goes to the
    log. A MemoryError passes: the parser child reports it as the memory limit."""
    try:
        yield
    except MemoryError:
        raise
    except Exception as exc:
        log.info("%s: %s: %s", kind.unreadable, type(exc).__name__, exc)
        raise ParseError(kind.unreadable) from None

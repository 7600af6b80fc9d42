"""Zip containers (.docx): declared sizes, ratios and member counts checked before anything is unpacked."""
from __future__ import annotations

import io
import zipfile

from kb.ingestion.parsers.base import MIB, ParseError, ParseLimits


def open_zip(data: bytes, *, limits: ParseLimits, kind: str) -> zipfile.ZipFile:
    """The archive, once its central directory shows nothing that would unpack into a memory bomb.

    zipfile never yields more bytes for a member than its declared size (a member that inflates
    further fails its length/CRC check), so checking the declared sizes bounds what parsing reads.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        raise ParseError(f"the {kind} could not be read (it is not a valid zip container)") from None
    if len(members) > limits.max_zip_members:
        raise ParseError(f"the {kind} holds {len(members):,} parts; the limit is {limits.max_zip_members:,}")
    unpacked = sum(member.file_size for member in members)
    if unpacked > limits.max_unzipped_bytes:
        raise ParseError(f"the {kind} would unpack to {unpacked / MIB:,.0f} MB; "
                         f"the limit is {limits.max_unzipped_bytes / MIB:,.0f} MB")
    for member in members:
        if member.file_size < limits.zip_ratio_min_bytes:
            continue
        ratio = member.file_size / max(member.compress_size, 1)
        if ratio > limits.max_zip_ratio:
            raise ParseError(f"the {kind} is compressed {ratio:,.0f}:1 (limit {limits.max_zip_ratio:,.0f}:1), "
                             "which real documents never are; it looks like a zip bomb")
    return archive

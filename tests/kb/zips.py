"""Zip archives built for tests, including the odd ones real tools make (GBK names, links, encrypted flags)."""
from __future__ import annotations

import io
import stat
import zipfile


def make_zip(entries: dict[str, bytes], *, symlinks: dict[str, str] | None = None) -> bytes:
    """Names as given (UTF-8 flagged when not ASCII, as zipfile writes them); `symlinks` maps name → target."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def with_raw_name(archive: bytes, placeholder: str, raw: bytes) -> bytes:
    """The archive with `placeholder` (ASCII, as long as `raw`) replaced by the raw name bytes, UTF-8 flag unset:
    what a zip tool on Chinese Windows writes (GBK bytes, no flag)."""
    assert len(placeholder.encode()) == len(raw)
    return archive.replace(placeholder.encode(), raw)


def with_encrypted_flag(archive: bytes) -> bytes:
    """Every entry marked encrypted (bit 0 of the flags), in the local and the central headers."""
    data = bytearray(archive)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            data[start + offset] |= 0x1
            start += 4
    return bytes(data)

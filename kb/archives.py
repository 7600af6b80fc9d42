"""Reading a zip archive of documents safely: bounds checked before reading, unsafe entries refused one by one."""
from __future__ import annotations

import re
import stat
import zipfile
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from tempfile import SpooledTemporaryFile
from typing import IO

from django.utils.translation import gettext

# Archives inside the archive are not unpacked again: each level would multiply what the bounds allow.
NESTED_ARCHIVE_TYPES = frozenset({"zip", "7z", "rar", "tar", "gz", "tgz", "bz2", "xz", "zst", "jar"})
_UTF8_FLAG = 0x800
_ENCRYPTED_FLAG = 0x1
_DRIVE = re.compile(r"^[A-Za-z]:")
# Held in memory up to this size, then on disk: a whole archive's entries are read before any is stored.
_SPOOL_BYTES = 1024 * 1024


class ArchiveError(ValueError):
    """The archive as a whole is refused; `code` names why for a program: unreadable (not a zip), damaged,
    too_many_entries, too_large (unpacked)."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


def unsupported_type(suffix: str, supported: Iterable[str]) -> str:
    """Why a file of this type (its name's extension, without the dot; "" when it has none) is not accepted."""
    listed = ", ".join("." + t for t in supported)
    if not suffix:
        return gettext("the file name has no extension, so its type is unknown; supported: %(listed)s") \
            % {"listed": listed}
    return gettext("unsupported file type .%(suffix)s; supported: %(listed)s") % {"suffix": suffix, "listed": listed}


def too_large(size: int, limit: int) -> str:
    """Why a file of `size` bytes is not accepted under a limit of `limit` bytes."""
    return gettext("the file is %(size).1f MB; the limit is %(limit).0f MB") % {"size": size / 2**20,
                                                                              "limit": limit / 2**20}


@dataclass(frozen=True)
class ArchiveLimits:
    max_entries: int
    max_unpacked_bytes: int
    max_entry_bytes: int

    def __post_init__(self) -> None:
        for name in ("max_entries", "max_unpacked_bytes", "max_entry_bytes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")


@dataclass(frozen=True)
class EntryRefusal:
    """One entry not taken: `code` is for programs (unsupported, empty, too_large, unsafe_path, symlink,
    encrypted, nested_archive, system_file, unsupported_compression, duplicate), `reason` for people."""

    path: str
    code: str
    reason: str
    document_id: int | None = None  # a duplicate: the document already holding this content


@dataclass(frozen=True)
class ArchiveMember:
    """An entry read in full and checked (CRC): its path inside the archive, its bytes and their size."""

    path: str
    file: IO[bytes]
    size: int


@dataclass(frozen=True)
class ArchiveContents:
    members: list[ArchiveMember]
    refused: list[EntryRefusal]

    def close(self) -> None:
        for member in self.members:
            member.file.close()


def decoded_name(info: zipfile.ZipInfo) -> str:
    """The entry's name as its maker meant it.

    Without the UTF-8 flag, zipfile decodes names as CP437, which is what old DOS tools wrote; but zips made
    on Chinese Windows hold GBK bytes there and many other tools write UTF-8 without setting the flag. The
    raw bytes are tried as UTF-8 (it rarely decodes by accident), then as GB18030 (a superset of GBK), and
    stay CP437 when neither fits. Short accented CP437 names can also be valid GBK and then read as Chinese:
    the bases hold Chinese teams' documents, so a GBK name is by far the likelier meaning of such bytes.
    """
    if info.flag_bits & _UTF8_FLAG:
        return info.filename
    try:
        raw = info.orig_filename.encode("cp437")
    except UnicodeEncodeError:  # opened with another metadata_encoding: that one was chosen deliberately
        return info.filename
    for encoding in ("utf-8", "gb18030"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return info.filename


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


class ZipArchiveReader:
    """Reads the document files of a zip archive.

    The whole archive is refused (ArchiveError) when it is not a readable zip, holds more entries or declares
    more unpacked bytes than the limits allow, or an entry turns out damaged while read; all of that is known
    before the caller stores anything. A single entry that cannot be a document is refused with its reason,
    and the others are still read. Names are only reported, never used as paths on disk.
    """

    def __init__(self, *, limits: ArchiveLimits, supported_types: Collection[str]) -> None:
        if not supported_types:
            raise ValueError("supported_types must not be empty")
        self.limits = limits
        # Listed in the caller's order in a refusal, as a single file's refusal lists them.
        self.supported_types = tuple(dict.fromkeys(supported_types))

    def run(self, *, archive: IO[bytes]) -> ArchiveContents:
        try:
            zip_file = zipfile.ZipFile(archive)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as exc:
            raise ArchiveError(gettext("the file is not a readable zip archive"), code="unreadable") from exc
        with zip_file:
            infos = zip_file.infolist()
            self._check_bounds(infos)
            members: list[ArchiveMember] = []
            refused: list[EntryRefusal] = []
            try:
                for info in infos:
                    if info.is_dir():
                        continue
                    path = decoded_name(info).replace("\\", "/")
                    refusal = self._refusal(info, path)
                    if refusal is not None:
                        refused.append(refusal)
                        continue
                    read = self._read(zip_file, info, path)
                    (members if isinstance(read, ArchiveMember) else refused).append(read)
            except BaseException:
                ArchiveContents(members, refused).close()
                raise
        return ArchiveContents(members, refused)

    def _check_bounds(self, infos: list[zipfile.ZipInfo]) -> None:
        limits = self.limits
        if len(infos) > limits.max_entries:
            raise ArchiveError(gettext("the archive holds %(count)d entries; the limit is %(limit)d")
                               % {"count": len(infos), "limit": limits.max_entries}, code="too_many_entries")
        # zipfile stops every entry at its declared size (and then checks the CRC), so the declared
        # sizes bound what reading can produce, whatever the compression ratio.
        unpacked = sum(info.file_size for info in infos)
        if unpacked > limits.max_unpacked_bytes:
            raise ArchiveError(gettext("the archive unpacks to %(size).1f MB; the limit is %(limit).0f MB")
                               % {"size": unpacked / 2**20, "limit": limits.max_unpacked_bytes / 2**20},
                               code="too_large")

    def _refusal(self, info: zipfile.ZipInfo, path: str) -> EntryRefusal | None:
        parts = PurePosixPath(path).parts
        name = parts[-1] if parts else ""
        suffix = PurePosixPath(name).suffix.lower().lstrip(".")
        if path.startswith("/") or _DRIVE.match(path) or ".." in parts or "\x00" in path:
            return EntryRefusal(path, "unsafe_path", gettext("the name points outside the archive"))
        if _is_symlink(info):
            return EntryRefusal(path, "symlink", gettext("a symbolic link, not a file"))
        if "__MACOSX" in parts or name.startswith("._") or name in {".DS_Store", "Thumbs.db", "desktop.ini"}:
            return EntryRefusal(path, "system_file", gettext("operating-system metadata, not a document"))
        if info.flag_bits & _ENCRYPTED_FLAG:
            return EntryRefusal(path, "encrypted", gettext("the entry is encrypted"))
        if suffix in NESTED_ARCHIVE_TYPES:
            return EntryRefusal(path, "nested_archive", gettext("an archive inside the archive; upload it on its own"))
        if suffix not in self.supported_types:
            return EntryRefusal(path, "unsupported", unsupported_type(suffix, self.supported_types))
        if info.file_size == 0:
            return EntryRefusal(path, "empty", gettext("the file is empty"))
        if info.file_size > self.limits.max_entry_bytes:
            return EntryRefusal(path, "too_large", too_large(info.file_size, self.limits.max_entry_bytes))
        return None

    def _read(self, zip_file: zipfile.ZipFile, info: zipfile.ZipInfo, path: str) -> ArchiveMember | EntryRefusal:
        spool = SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # noqa: SIM115 - closed by ArchiveContents.close
        size = 0
        try:
            with zip_file.open(info) as entry:
                while block := entry.read(64 * 1024):
                    size += len(block)
                    if size > info.file_size:  # never past the declared size, whatever the zipfile version does
                        raise zipfile.BadZipFile("more data than declared")
                    spool.write(block)
        except NotImplementedError:  # a compression method this Python lacks: the others are still fine
            spool.close()
            return EntryRefusal(path, "unsupported_compression",
                                gettext("compressed with a method that cannot be read"))
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, RuntimeError) as exc:
            spool.close()
            raise ArchiveError(gettext("the archive is damaged at “%(path)s”; nothing was stored") % {"path": path},
                               code="damaged") from exc
        spool.seek(0)
        return ArchiveMember(path=path, file=spool, size=size)

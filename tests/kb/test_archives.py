"""The zip reader: bounds refuse the whole archive, unsafe entries are refused one by one, names decoded."""
import io
import zipfile

import pytest

from kb.archives import ArchiveError, ArchiveLimits, ZipArchiveReader
from tests.kb.zips import make_zip, with_encrypted_flag, with_raw_name

# Their refusals are asserted in English.
pytestmark = pytest.mark.usefixtures("english")

LIMITS = ArchiveLimits(max_entries=20, max_unpacked_bytes=100_000, max_entry_bytes=10_000)


def read(archive: bytes, limits: ArchiveLimits = LIMITS):
    return ZipArchiveReader(limits=limits, supported_types={"txt", "md", "pdf"}).run(archive=io.BytesIO(archive))


def refusals(contents) -> dict[str, str]:
    return {refusal.path: refusal.code for refusal in contents.refused}


def test_it_reads_supported_files_with_their_folders_and_refuses_the_rest_by_reason():
    contents = read(make_zip({
        "hr/leave.md": b"# Leave\nTwenty days.", "notes.txt": "报销".encode(), "hr/": b"",
        "tool.exe": b"MZ", "blank.txt": b"", "big.txt": b"x" * 10_001, "inner.zip": make_zip({"a.txt": b"a"}),
        "__MACOSX/hr/._leave.md": b"\x00\x05", ".DS_Store": b"\x00",
    }))
    assert {m.path: m.file.read() for m in contents.members} == {"hr/leave.md": b"# Leave\nTwenty days.",
                                                                 "notes.txt": "报销".encode()}
    assert refusals(contents) == {"tool.exe": "unsupported", "blank.txt": "empty", "big.txt": "too_large",
                                  "inner.zip": "nested_archive", "__MACOSX/hr/._leave.md": "system_file",
                                  ".DS_Store": "system_file"}
    contents.close()


@pytest.mark.parametrize("name", ["../evil.txt", "a/../../evil.txt", "/etc/evil.txt", "C:/evil.txt",
                                  "..\\..\\evil.txt"])
def test_it_refuses_names_that_point_outside_the_archive(name):
    contents = read(make_zip({name: b"text", "ok.txt": b"fine"}))
    assert [m.path for m in contents.members] == ["ok.txt"]
    assert [r.code for r in contents.refused] == ["unsafe_path"]


def test_it_refuses_symbolic_links():
    contents = read(make_zip({"ok.txt": b"fine"}, symlinks={"link.txt": "/etc/passwd"}))
    assert refusals(contents) == {"link.txt": "symlink"}


def test_it_refuses_encrypted_entries_without_reading_them():
    contents = read(with_encrypted_flag(make_zip({"secret.txt": b"text"})))
    assert refusals(contents) == {"secret.txt": "encrypted"} and contents.members == []


def test_too_many_entries_refuse_the_whole_archive():
    archive = make_zip({f"{i}.txt": b"x" for i in range(5)})
    with pytest.raises(ArchiveError, match="5 entries; the limit is 4"):
        read(archive, ArchiveLimits(max_entries=4, max_unpacked_bytes=100_000, max_entry_bytes=10_000))


def test_a_zip_bomb_is_refused_whole_from_its_declared_sizes():
    archive = make_zip({"a.txt": b"0" * 60_000, "b.txt": b"0" * 60_000})
    assert len(archive) < 2_000  # highly compressible: the bound is on the unpacked size, not the upload
    with pytest.raises(ArchiveError, match="unpacks to"):
        read(archive)


@pytest.mark.parametrize("data", [b"", b"not a zip at all", b"PK\x03\x04" + b"\x00" * 40])
def test_a_file_that_is_not_a_zip_is_refused(data):
    with pytest.raises(ArchiveError, match="not a readable zip"):
        read(data)


def test_a_damaged_entry_refuses_the_whole_archive():
    archive = bytearray(make_zip({"a.txt": b"first document text " * 20}))
    header_end = 30 + len("a.txt")
    archive[header_end + 5] ^= 0xFF  # a byte of the compressed data: the CRC or the inflater fails
    with pytest.raises(ArchiveError, match="damaged at “a.txt”"):
        read(bytes(archive))


@pytest.mark.parametrize(("raw", "expected"), [
    ("报销制度.txt".encode("gbk"), "报销制度.txt"),
    ("报销制度.txt".encode(), "报销制度.txt"),  # UTF-8 without the flag, as some tools write it
    # CP437 stays where the bytes are no GBK; where they are both, GBK wins (see decoded_name).
    ("café.txt".encode("cp437"), "café.txt"),
])
def test_names_without_the_utf8_flag_are_decoded_as_their_maker_meant(raw, expected):
    placeholder = "N" * (len(raw) - 4) + ".txt"
    archive = with_raw_name(make_zip({placeholder: b"text"}), placeholder, raw)
    assert not zipfile.ZipFile(io.BytesIO(archive)).infolist()[0].flag_bits & 0x800
    assert [m.path for m in read(archive).members] == [expected]


def test_limits_must_be_positive():
    with pytest.raises(ValueError, match="max_entries"):
        ArchiveLimits(max_entries=0, max_unpacked_bytes=1, max_entry_bytes=1)

"""Bounded parsing: zip bombs, oversized documents and runaway parsers fail with a reason, never stall."""
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from kb.ingestion.parsers import ParseError, ParseInterrupted, ParseLimits, parse_document
from kb.ingestion.parsers.base import MIB
from kb.ingestion.parsers.isolated import CHILD_MODULE, IsolatedParser
from tests.kb.ingestion.files import blank_pdf, docx_bytes, docx_with_paragraphs, zip_with_members

ROOT = Path(__file__).resolve().parents[3]


def test_a_docx_bomb_of_millions_of_empty_paragraphs_is_refused_before_parsing():
    bomb = docx_with_paragraphs(4_000_000)
    assert len(bomb) < 100_000
    with pytest.raises(ParseError, match="zip bomb"):
        parse_document(bomb, "docx")


def test_a_docx_with_too_many_paragraphs_is_refused_even_at_a_normal_ratio():
    data = docx_with_paragraphs(2_000, text="第一段")
    with pytest.raises(ParseError, match="more than 1,000 paragraphs"):
        parse_document(data, "docx", limits=ParseLimits(max_paragraphs=1_000, max_zip_ratio=10_000))


def test_a_docx_that_would_unpack_past_the_limit_is_refused():
    with pytest.raises(ParseError, match="would unpack to"):
        parse_document(docx_bytes("正文"), "docx", limits=ParseLimits(max_unzipped_bytes=1_000))


def test_a_zip_with_too_many_members_is_refused():
    with pytest.raises(ParseError, match="holds 50 parts"):
        parse_document(zip_with_members(50), "docx", limits=ParseLimits(max_zip_members=20))


def test_small_members_may_compress_well():
    # Real documents carry a few KB of repetitive markup (styles, numbering) that compresses far past 100:1.
    text = parse_document(docx_with_paragraphs(50, text="段落"), "docx",
                          limits=ParseLimits(max_zip_ratio=2, zip_ratio_min_bytes=MIB))
    assert text.count("段落") == 50


def test_a_pdf_with_too_many_pages_is_refused():
    with pytest.raises(ParseError, match="has 3 pages; the limit is 2"):
        parse_document(blank_pdf(3), "pdf", limits=ParseLimits(max_pages=2))


@pytest.mark.parametrize("file_type", ["txt", "html"])
def test_text_longer_than_the_character_limit_is_refused(file_type):
    with pytest.raises(ParseError, match="more than 100 characters"):
        parse_document(("长文本。" * 100).encode(), file_type, limits=ParseLimits(max_chars=100))


def test_the_isolated_parser_returns_the_same_text_as_in_process():
    data = docx_bytes("第一段。", "第二段。")
    assert IsolatedParser()(data, "docx").text == parse_document(data, "docx")


def test_the_isolated_parser_passes_refusals_and_limits_to_the_child():
    with pytest.raises(ParseError, match="zip bomb"):
        IsolatedParser()(docx_with_paragraphs(4_000_000), "docx")
    with pytest.raises(ParseError, match="more than 10 characters"):
        IsolatedParser(limits=ParseLimits(max_chars=10))("这是一段超过十个字的文本。".encode(), "txt")


def test_a_parse_that_exceeds_the_memory_limit_fails_with_a_reason():
    # Below every size and ratio check, yet python-docx needs ~450 bytes per paragraph.
    data = docx_with_paragraphs(300_000)
    parser = IsolatedParser(limits=ParseLimits(max_zip_ratio=1e9, max_paragraphs=10**8), memory_bytes=120 * MIB)
    with pytest.raises(ParseError, match="more than 120 MB of memory"):
        parser(data, "docx")


def test_a_parse_that_exceeds_the_time_limit_is_killed_with_a_reason():
    # A million paragraphs take python-docx several seconds; the deadline stops it well before.
    parser = IsolatedParser(limits=ParseLimits(max_zip_ratio=1e9, max_paragraphs=10**8), timeout_seconds=0.5)
    with pytest.raises(ParseError, match="took longer than 0.5 s"):
        parser(docx_with_paragraphs(1_000_000), "docx")



def _parsing_docx(child: psutil.Process) -> bool:
    """The child is past start-up and into the parser: python-docx's lxml is mapped into it."""
    try:
        return any("lxml" in m.path for m in child.memory_maps())
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_parser_child_stopped_by_a_shutdown_signal_is_an_interruption_not_a_bad_file(signum):
    parser = IsolatedParser(limits=ParseLimits(max_zip_ratio=1e9, max_paragraphs=10**8), timeout_seconds=60)
    raised: list[BaseException] = []

    def parse() -> None:
        try:
            parser(docx_with_paragraphs(1_000_000), "docx")
        except BaseException as exc:  # noqa: BLE001 - the test inspects what was raised
            raised.append(exc)

    # Warm children of parsers other tests in this process used are not this parser's.
    others = {p.pid for p in psutil.Process().children()}
    thread = threading.Thread(target=parse)
    thread.start()
    parsers: list[psutil.Process] = []
    deadline = time.monotonic() + 20
    while not parsers and time.monotonic() < deadline:
        time.sleep(0.02)
        parsers = [p for p in psutil.Process().children()
                   if p.pid not in others and CHILD_MODULE in " ".join(p.cmdline())]
    (child,) = parsers
    while time.monotonic() < deadline and not _parsing_docx(child):
        time.sleep(0.02)
    assert _parsing_docx(child), "the parser child never loaded python-docx"
    child.send_signal(signum)
    thread.join(timeout=20)
    assert len(raised) == 1 and isinstance(raised[0], ParseInterrupted)
    assert not isinstance(raised[0], ParseError)  # a ParseError would fail the document for good


def test_a_parser_child_dies_with_its_worker(tmp_path):
    path = tmp_path / "slow.docx"
    path.write_bytes(docx_with_paragraphs(1_000_000))
    script = (
        "import sys, pathlib; sys.path[:0] = sys.argv[1:2]\n"
        "from kb.ingestion.parsers import ParseLimits\n"
        "from kb.ingestion.parsers.isolated import CHILD_MODULE, IsolatedParser\n"
        "limits = ParseLimits(max_zip_ratio=1e9, max_paragraphs=10**8)\n"
        "IsolatedParser(limits=limits, timeout_seconds=60)(pathlib.Path(sys.argv[2]).read_bytes(), 'docx')\n"
    )
    worker = subprocess.Popen([sys.executable, "-c", script, str(ROOT), str(path)])
    children: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 20
        while not children and time.monotonic() < deadline:
            time.sleep(0.02)
            children = psutil.Process(worker.pid).children()
        (child,) = children
        worker.kill()
        worker.wait()
        child.wait(timeout=5)  # raises psutil.TimeoutExpired while the orphan keeps parsing
        assert not child.is_running()
    finally:
        worker.kill()
        worker.wait()
        for orphan in children:
            if orphan.is_running():
                orphan.kill()


def test_a_refusal_is_not_mistaken_for_running_out_of_memory_under_a_large_worker():
    # Linux hands a parent's peak resident size to its exec'd child through getrusage; a worker
    # holding the embedding model is that large, and its children must still report the real reason.
    script = (
        "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'project.settings'); django.setup()\n"
        "ballast = bytearray(1200 * 1024 * 1024)\n"
        "for i in range(0, len(ballast), 4096): ballast[i] = 1\n"
        "from kb.ingestion.parsers import ParseError\n"
        "from kb.ingestion.parsers.isolated import CHILD_MODULE, IsolatedParser\n"
        "from tests.kb.ingestion.files import docx_with_paragraphs\n"
        "try:\n"
        "    IsolatedParser()(docx_with_paragraphs(4_000_000), 'docx')\n"
        "except ParseError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "zip bomb" in result.stdout, result.stdout + result.stderr

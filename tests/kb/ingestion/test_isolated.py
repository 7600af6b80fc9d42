"""IsolatedParser's warm children: reused across documents, replaced after any failure, limits per document."""
import json
import os
import signal
import time

import psutil
import pytest

from kb.ingestion.parsers import ParseError, ParseLimits
from kb.ingestion.parsers.base import MIB
from kb.ingestion.parsers.isolated import CHILD_MODULE, REQUEST_HEADER, TEXT, IsolatedParser, _Worker
from tests.kb.ingestion.files import docx_bytes, docx_with_paragraphs

HEAVY = ParseLimits(max_zip_ratio=1e9, max_paragraphs=10**8)


def _children() -> set[int]:
    return {p.pid for p in psutil.Process().children() if CHILD_MODULE in " ".join(p.cmdline())}


def _wait_until(condition, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_one_warm_child_parses_one_document_after_another():
    before = _children()
    parser = IsolatedParser()
    try:
        assert parser("第一篇。".encode(), "txt").text == "第一篇。"
        first = _children() - before
        assert parser(docx_bytes("第二篇。"), "docx").text == "第二篇。"
        assert parser("第三篇。".encode(), "txt").text == "第三篇。"
        assert len(first) == 1 and _children() - before == first
    finally:
        parser.close()
    assert _wait_until(lambda: not (_children() - before))


def test_a_refused_file_fails_alone_and_the_same_child_goes_on():
    before = _children()
    parser = IsolatedParser(limits=ParseLimits(max_chars=10))
    try:
        with pytest.raises(ParseError, match="more than 10 characters"):
            parser("这是一段超过十个字的文本。".encode(), "txt")
        child = _children() - before
        assert parser("短文。".encode(), "txt").text == "短文。"
        assert _children() - before == child
    finally:
        parser.close()


def test_a_file_past_the_deadline_fails_with_its_reason_and_the_next_one_gets_a_fresh_child():
    parser = IsolatedParser(limits=HEAVY, timeout_seconds=0.5)
    try:
        assert parser("热身。".encode(), "txt").text == "热身。"
        with pytest.raises(ParseError, match="took longer than 0.5 s"):
            parser(docx_with_paragraphs(1_000_000), "docx")
        assert parser("下一篇。".encode(), "txt").text == "下一篇。"
    finally:
        parser.close()


def test_a_file_past_the_memory_limit_fails_with_its_reason_and_the_next_one_parses():
    parser = IsolatedParser(limits=HEAVY, memory_bytes=120 * MIB)
    try:
        with pytest.raises(ParseError, match="more than 120 MB of memory"):
            parser(docx_with_paragraphs(300_000), "docx")
        assert parser(docx_bytes("正常的文件。"), "docx").text == "正常的文件。"
    finally:
        parser.close()


def test_the_cpu_limit_is_per_document_not_for_the_childs_lifetime():
    # Each document takes about half a second of CPU, under its limit of two; together they take more.
    data = docx_with_paragraphs(12_000, text="段落")
    request = json.dumps({"file_type": "docx", "limits": HEAVY.as_dict()}).encode()
    worker = _Worker.start(1024 * MIB)
    try:
        for _ in range(6):
            message = REQUEST_HEADER.pack(len(request), len(data), 2) + request + data
            status, keep_going, payload = worker.exchange(message, deadline=time.monotonic() + 600)
            assert (status, keep_going) == (TEXT, True)
            assert payload.count("段落".encode()) == 12_000
    finally:
        worker.close()


def test_an_idle_child_that_died_is_replaced_without_failing_the_next_document():
    before = _children()
    parser = IsolatedParser()
    try:
        parser("一。".encode(), "txt")
        (child,) = _children() - before
        os.kill(child, signal.SIGKILL)
        assert _wait_until(lambda: psutil.Process(child).status() == psutil.STATUS_ZOMBIE)
        assert parser("二。".encode(), "txt").text == "二。"
    finally:
        parser.close()


def test_a_child_replaces_itself_after_its_quota_of_documents():
    before = _children()
    parser = IsolatedParser(documents_per_worker=2)
    try:
        seen = set()
        for i in range(4):
            parser(f"第{i}篇。".encode(), "txt")
            seen |= _children() - before
        assert len(seen) == 2
    finally:
        parser.close()

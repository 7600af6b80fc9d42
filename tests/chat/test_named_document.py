"""A summary that names a document by its title reads that document, as if it had been selected, when the asker may
read its original; otherwise it is searched like any question."""
from __future__ import annotations

import threading

import pytest

from chat.pipeline import ChatPipeline
from kb import services
from kb.models import KbAccess
from tests.chat.chat_helpers import BEARS_TITLE, by_type, ingest_new_base, ingest_tiny_kb

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

TITLE = "支付排障手册"
TEXT = (f"# {TITLE}\n## 一、支付超时\n支付超时三十秒后自动重试，最多重试三次。\n"
        "## 二、扣款无回调\n先查询渠道订单状态，再补发回调通知。\n")


def ask(user, message, **kw):
    return list(ChatPipeline().run(user=user, message=message, cancel=threading.Event(), **kw))


@pytest.fixture(autouse=True)
def fresh_cache():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def test_a_summary_naming_a_document_reads_that_document(member):
    ingest_tiny_kb()
    events = ask(member, f"总结一下{BEARS_TITLE}")
    routing = by_type(events, "routing").data
    assert routing["mode"] == "SELECTED_DOC" and BEARS_TITLE in routing["reason"]
    assert {c["document_title"] for c in by_type(events, "retrieval").data["kb_chunks"]} == {BEARS_TITLE}
    assert {c["document_title"] for c in by_type(events, "done").data["citations"]} == {BEARS_TITLE}


def test_a_question_naming_a_document_without_asking_for_a_summary_is_searched(member):
    ingest_tiny_kb()
    assert by_type(ask(member, f"{BEARS_TITLE}里北极熊吃什么？"), "routing").data["mode"] != "SELECTED_DOC"


def test_a_document_the_asker_may_only_view_is_not_read_whole(member):
    base = ingest_new_base("Ops", title=TITLE, text=TEXT, domain="payment")
    services.kb_grant(kb=base, user=member, access=KbAccess.VIEW)
    assert by_type(ask(member, f"总结一下{TITLE}"), "routing").data["mode"] != "SELECTED_DOC"
    services.kb_grant(kb=base, user=member, access=KbAccess.READ)
    assert by_type(ask(member, f"总结一下{TITLE}"), "routing").data["mode"] == "SELECTED_DOC"

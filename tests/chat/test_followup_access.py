"""A follow-up reads the last turn's documents through the readable-bases filter like every other read:
after a revoke, the rewrite names neither the document nor its section headings."""
from __future__ import annotations

import threading

import pytest

from chat.pipeline import ChatPipeline
from kb import services
from kb.models import KbAccess
from tests.chat.chat_helpers import by_type, ingest_new_base

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

TITLE, HEADING = "支付排障手册", "二、扣款无回调ZEBRAQUARTZ"
TEXT = (f"# {TITLE}\n## 一、支付超时\n支付超时三十秒后自动重试，最多重试三次。\n"
        f"## {HEADING}\n扣款成功但没有回调时，先查询渠道订单状态，再补发回调通知。\n")


@pytest.fixture
def ops(member):
    from django.core.cache import cache

    cache.clear()
    base = ingest_new_base("Ops", title=TITLE, text=TEXT, domain="payment")
    services.kb_grant(kb=base, user=member, access=KbAccess.READ)
    yield base
    cache.clear()


def ask(user, message, **kw):
    return list(ChatPipeline().run(user=user, message=message, cancel=threading.Event(), **kw))


def _first_turn(member) -> int:
    done = by_type(ask(member, "支付超时会自动重试几次？"), "done").data
    assert TITLE in {c["document_title"] for c in done["citations"]}
    return done["conversation_id"]


def test_a_follow_up_resolves_a_section_of_a_readable_document(member, ops):
    conversation = _first_turn(member)
    events = ask(member, "第二类怎么处理？", conversation_id=conversation)
    assert "ZEBRAQUARTZ" in by_type(events, "understanding").data["rewritten"]


def test_a_follow_up_after_a_revoke_names_nothing_of_the_revoked_document(member, ops):
    conversation = _first_turn(member)
    services.kb_revoke(kb=ops, user=member)
    events = ask(member, "第二类怎么处理？", conversation_id=conversation)
    understanding = by_type(events, "understanding").data
    assert "ZEBRAQUARTZ" not in understanding["rewritten"] and TITLE not in understanding["rewritten"]
    assert "ZEBRAQUARTZ" not in str(understanding)

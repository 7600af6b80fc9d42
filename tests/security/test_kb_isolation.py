"""Leak probe: two knowledge bases with marker words, users with and without grants, every read path.

A marker is a word that occurs only in one base's document (its text and title) and never in a
question, so finding it in anything a user receives means the other base leaked. Each path is also
asked the positive question, so a probe that finds nothing because nothing works cannot pass.
The module runs twice: with the in-process indexes (the default over Milvus Lite) and without them,
so that the Milvus filter expressions a Milvus server would evaluate are exercised too.
"""
from __future__ import annotations

import json
import threading

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.core.cache import cache
from django.test import AsyncClient, Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from chat.pipeline import ChatPipeline
from docmind.backends import reset_backends
from docmind.indexes.stores import get_vector_store
from kb import services
from kb.models import KbAccess
from tests.fakes.openai_server import tool_calls
from tests.isolation import skip_used_ids

# Transactional (chat turns run on worker threads with their own connections), without serialized
# rollback: the user fixtures seed the roles and the default knowledge base is made on demand, while
# restoring serialized content types after an earlier test's flush would collide.
pytestmark = pytest.mark.django_db(transaction=True)

HR_MARKER, FIN_MARKER = "ZEBRAQUARTZ", "MANGOFLUX"
HR_TITLE, FIN_TITLE = f"人事手册{HR_MARKER}", f"财务手册{FIN_MARKER}"
HR_TEXT = (f"人事部的门禁密码是{HR_MARKER}。新员工入职第一天到人事部领取工牌，门禁密码{HR_MARKER}每季度更换。"
           "年假申请需要提前一周提交给直属经理。")
FIN_TEXT = (f"财务部的报销审批口令是{FIN_MARKER}。报销审批口令{FIN_MARKER}只告诉部门负责人。"
            "预算超过五万元需要财务总监签字。")
HR_QUESTION = "人事部的门禁密码是什么？"
FIN_QUESTION = "财务部的报销审批口令是什么？"


@pytest.fixture(params=["in_process", "milvus_filter"])
def index_mode(request, settings, tmp_path):
    """The stores as the default runs them, then with the in-process indexes switched off."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INDEX_IN_PROCESS = request.param == "in_process"
    reset_backends()
    cache.clear()
    yield request.param
    settings.INDEX_IN_PROCESS = True
    reset_backends()


@pytest.fixture
def world(index_mode, django_user_model):
    """HR and finance bases with one marker document each; alice reads HR, bob finance, carol neither."""
    from docmind.roles import MEMBER, ensure_roles, user_set_role
    from kb.ingestion.worker import process_pending_documents

    ensure_roles()
    users = {}
    for name in ("alice", "bob", "carol"):
        users[name] = django_user_model.objects.create_user(username=name, password="pw-" + name)
        user_set_role(user=users[name], role=MEMBER)
    skip_used_ids()  # no earlier test's rows in the shared Milvus file: they are in other bases
    hr = services.kb_create(name="HR", description="people")
    fin = services.kb_create(name="Finance", description="money")
    hr_doc, _ = services.document_ingest_text(title=HR_TITLE, text=HR_TEXT, domain="policy", kb=hr)
    fin_doc, _ = services.document_ingest_text(title=FIN_TITLE, text=FIN_TEXT, domain="policy", kb=fin)
    process_pending_documents()
    services.kb_grant(kb=hr, user=users["alice"], access=KbAccess.READ)
    services.kb_grant(kb=fin, user=users["bob"], access=KbAccess.READ)
    if index_mode == "milvus_filter":
        from docmind.indexes.stores import get_lexical_index

        # The searches below really go to Milvus, with the filter expression.
        assert get_vector_store()._local is None and get_lexical_index()._local is None
    return {"users": users, "hr": hr, "fin": fin, "hr_doc": hr_doc, "fin_doc": fin_doc}


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


def _retrieve_text(user, query: str, **extra) -> tuple[int, str]:
    response = _api(user).post("/api/kb/retrieve/", {"query": query, "top_k": 10, **extra}, format="json")
    return response.status_code, json.dumps(response.json(), ensure_ascii=False)


def test_retrieve_returns_only_the_readable_base(world):
    alice, bob, carol = (world["users"][n] for n in ("alice", "bob", "carol"))
    status, body = _retrieve_text(alice, HR_QUESTION)
    assert status == 200 and HR_MARKER in body
    for query in (FIN_QUESTION, "报销 审批 口令 预算 财务总监", "门禁 报销 口令 密码"):
        status, body = _retrieve_text(alice, query)
        assert status == 200 and FIN_MARKER not in body
    status, body = _retrieve_text(bob, FIN_QUESTION)
    assert FIN_MARKER in body and HR_MARKER not in _retrieve_text(bob, HR_QUESTION)[1]
    for query in (HR_QUESTION, FIN_QUESTION):
        body = _retrieve_text(carol, query)[1]
        assert HR_MARKER not in body and FIN_MARKER not in body


def test_naming_an_unreadable_base_answers_404_like_an_unknown_one(world):
    alice = world["users"]["alice"]
    assert _retrieve_text(alice, FIN_QUESTION, kb=[world["fin"].pk])[0] == 404
    assert _retrieve_text(alice, FIN_QUESTION, kb=[world["hr"].pk, world["fin"].pk])[0] == 404
    assert _retrieve_text(alice, FIN_QUESTION, kb=[987654])[0] == 404
    status, body = _retrieve_text(alice, HR_QUESTION, kb=[world["hr"].pk])
    assert status == 200 and HR_MARKER in body


def test_documents_list_detail_download_and_reader_hide_the_other_base(world):
    alice, fin_doc, hr_doc = world["users"]["alice"], world["fin_doc"], world["hr_doc"]
    api = _api(alice)
    listed = json.dumps(api.get("/api/kb/documents/").json(), ensure_ascii=False)
    assert HR_MARKER in listed and FIN_MARKER not in listed
    assert api.get(f"/api/kb/documents/?kb={world['fin'].pk}").status_code == 404
    assert api.get(f"/api/kb/documents/{fin_doc.pk}/").status_code == 404
    assert api.get(f"/api/kb/documents/{fin_doc.pk}/file/").status_code == 404
    assert api.get(f"/api/kb/documents/{hr_doc.pk}/file/").status_code == 200
    assert api.delete(f"/api/kb/documents/{fin_doc.pk}/").status_code in (403, 404)
    browser = Client()
    browser.force_login(alice)
    assert browser.get(f"/documents/{fin_doc.pk}/").status_code == 404
    assert HR_MARKER in browser.get(f"/documents/{hr_doc.pk}/").content.decode()
    kbs = json.dumps(api.get("/api/kbs/").json(), ensure_ascii=False)
    assert "HR" in kbs and "Finance" not in kbs
    assert api.get(f"/api/kbs/{world['fin'].pk}/").status_code == 404
    assert api.get(f"/api/kbs/{world['fin'].pk}/grants/").status_code == 404


def _ask(user, message: str, **kwargs) -> tuple[list, str]:
    events = list(ChatPipeline().run(user=user, message=message, cancel=threading.Event(), **kwargs))
    return events, json.dumps([e.to_ws() for e in events], ensure_ascii=False)


async def _sse(user, body: dict) -> tuple[int, str]:
    token, _ = await sync_to_async(Token.objects.get_or_create)(user=user)
    response = await AsyncClient().post("/api/chat/", json.dumps(body), content_type="application/json",
                                        headers={"Authorization": f"Token {token.key}"})
    if response.streaming:
        return response.status_code, b"".join([c async for c in response.streaming_content]).decode()
    return response.status_code, response.content.decode()


async def test_sse_chat_never_streams_the_other_base(world):
    alice = world["users"]["alice"]
    status, raw = await _sse(alice, {"message": HR_QUESTION})
    assert status == 200 and HR_MARKER in raw
    status, raw = await _sse(alice, {"message": FIN_QUESTION})
    assert status == 200 and "event: done" in raw and FIN_MARKER not in raw
    status, raw = await _sse(alice, {"message": FIN_QUESTION, "kb": [world["fin"].pk]})
    assert status == 404 and FIN_MARKER not in raw
    status, raw = await _sse(alice, {"message": "总结这个文档", "document_id": world["fin_doc"].pk})
    assert status == 404 and FIN_MARKER not in raw


def _session_cookie(user) -> bytes:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}".encode()


async def _ws_ask(user, frame: dict) -> str:
    from project.routing import application

    headers = [(b"origin", b"http://localhost"), (b"host", b"localhost"),
               (b"cookie", await sync_to_async(_session_cookie)(user))]
    ws = WebsocketCommunicator(application, "/ws/chat/", headers=headers)
    got = []
    try:
        connected, _ = await ws.connect()
        assert connected
        await ws.send_json_to({"type": "ask", **frame})
        while True:
            item = await ws.receive_json_from(timeout=60)
            got.append(item)
            if item["type"] in ("done", "error"):
                break
    finally:
        await ws.disconnect()
    return json.dumps(got, ensure_ascii=False)


async def test_websocket_chat_never_sends_the_other_base(world):
    alice = world["users"]["alice"]
    assert HR_MARKER in await _ws_ask(alice, {"message": HR_QUESTION})
    assert FIN_MARKER not in await _ws_ask(alice, {"message": FIN_QUESTION})
    refused = await _ws_ask(alice, {"message": FIN_QUESTION, "kb": [world["fin"].pk]})
    assert '"kb_not_found"' in refused and FIN_MARKER not in refused
    refused = await _ws_ask(alice, {"message": "总结这个文档", "document_id": world["fin_doc"].pk})
    assert '"document_not_found"' in refused and FIN_MARKER not in refused


def test_meta_answers_list_only_readable_documents(world):
    alice, carol = world["users"]["alice"], world["users"]["carol"]
    _, text = _ask(alice, "知识库里有哪些文档？")
    assert HR_MARKER in text and FIN_MARKER not in text
    _, text = _ask(carol, "知识库里有哪些文档？")
    assert HR_MARKER not in text and FIN_MARKER not in text


def test_a_revoked_grant_is_not_answered_from_the_cache(world):
    alice, fin = world["users"]["alice"], world["fin"]
    grant = services.kb_grant(kb=fin, user=alice, access=KbAccess.READ)
    assert grant.pk
    _, first = _ask(alice, FIN_QUESTION)
    assert FIN_MARKER in first
    _, again = _ask(alice, FIN_QUESTION)
    assert FIN_MARKER in again and '"cached": true' in again  # the cache was really in play
    services.kb_revoke(kb=fin, user=alice)
    _, after = _ask(alice, FIN_QUESTION)
    assert FIN_MARKER not in after


def test_a_grant_change_takes_effect_on_the_next_request(world):
    alice, fin = world["users"]["alice"], world["fin"]
    assert FIN_MARKER not in _retrieve_text(alice, FIN_QUESTION)[1]
    services.kb_grant(kb=fin, user=alice, access=KbAccess.READ)
    assert FIN_MARKER in _retrieve_text(alice, FIN_QUESTION)[1]
    services.kb_revoke(kb=fin, user=alice)
    assert FIN_MARKER not in _retrieve_text(alice, FIN_QUESTION)[1]


@pytest.fixture
def remote_model(settings, scripted_openai, world):
    """An online model behind the scripted server; the planner searches with both tools, then stops."""
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = scripted_openai.base_url
    reset_backends()

    def reply(body):
        messages = body.get("messages") or []
        if body.get("tools"):
            if any(m.get("role") == "tool" for m in messages):
                return "检索完成"
            return tool_calls(("searchDocs", {"query": "报销审批口令"}),
                              ("keywordSearch", {"query": "报销 审批 口令 门禁 密码"}))
        return "{}" if body.get("response_format") else "根据资料作答 [1]。"

    scripted_openai.respond_with(reply)
    yield scripted_openai
    reset_backends()


def test_the_agentic_loop_and_planner_map_never_reach_the_other_base(world, remote_model):
    alice = world["users"]["alice"]
    events, text = _ask(alice, "对比人事部的门禁密码和财务部的报销审批口令分别是什么")
    routing = next(e for e in events if e.type == "routing").data
    assert routing["mode"] == "AGENTIC"
    planner = [r for r in remote_model.requests if r.get("tools")]
    assert planner, "the planner was never called"
    sent = json.dumps(remote_model.requests, ensure_ascii=False)
    assert HR_MARKER in sent  # the readable base did reach the model (map and tool results)
    assert FIN_MARKER not in sent and FIN_MARKER not in text
    system_prompt = planner[0]["messages"][0]["content"]
    assert HR_TITLE in system_prompt and FIN_TITLE not in system_prompt

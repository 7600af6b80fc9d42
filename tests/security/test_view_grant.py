"""Leak probe of the `view` grant: answers and citation snippets yes, originals no — on every path.

Vera holds `view` on the HR base, Rita `read`. Every path that answers (retrieve, SSE chat, the chat
pipeline behind the WebSocket, MCP search and ask) must give Vera the marker; every path that shows an
original (document list and detail, download, reader, a selected document read whole, MCP list and
read_section, the admin) must not, while giving it to Rita — so a path that shows nothing to anyone
cannot pass.
"""
from __future__ import annotations

import json
import threading

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.test import AsyncClient, Client
from pydantic import ValidationError
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from chat.event_schema import validate_event
from chat.pipeline import ChatPipeline
from docmind.backends import reset_backends
from docmind.evidence import SNIPPET_CHARS
from kb import access, services
from kb.models import KbAccess
from project.mcp import tools
from tests.chat.chat_helpers import assert_events_follow_the_contract
from tests.isolation import skip_used_ids

pytestmark = pytest.mark.django_db(transaction=True)

MARKER = "ZEBRAQUARTZ"
TITLE = f"人事手册{MARKER}"
TEXT = (f"人事部的门禁密码是{MARKER}。新员工入职第一天到人事部领取工牌，门禁密码{MARKER}每季度更换。"
        "年假申请需要提前一周提交给直属经理。")
QUESTION = "人事部的门禁密码是什么？"


@pytest.fixture
def world(settings, tmp_path, django_user_model):
    from docmind.roles import KB_EDITOR, MEMBER, ensure_roles, user_set_role
    from kb.ingestion.worker import process_pending_documents

    settings.MEDIA_ROOT = tmp_path / "media"
    reset_backends()
    cache.clear()
    ensure_roles()
    users = {}
    for name, role in (("vera", MEMBER), ("rita", MEMBER), ("victor", KB_EDITOR), ("ralph", KB_EDITOR)):
        users[name] = django_user_model.objects.create_user(username=name, password="pw-" + name)
        user_set_role(user=users[name], role=role)
    skip_used_ids()
    hr = services.kb_create(name="HR", description="people")
    doc, _ = services.document_ingest_text(title=TITLE, text=TEXT, domain="policy", kb=hr)
    process_pending_documents()
    for name, level in (("vera", KbAccess.VIEW), ("rita", KbAccess.READ), ("victor", KbAccess.VIEW),
                        ("ralph", KbAccess.READ)):
        services.kb_grant(kb=hr, user=users[name], access=level)
    yield {"users": users, "hr": hr, "doc": doc}
    reset_backends()


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


def _text(response) -> str:
    return response.content.decode(errors="replace")


def test_access_levels_combine_without_weakening_read_or_edit(world, django_user_model):
    vera, rita, hr = world["users"]["vera"], world["users"]["rita"], world["hr"]
    assert hr.pk in access.askable_kb_ids(vera) and hr.pk not in access.readable_kb_ids(vera)
    assert hr.pk in access.askable_kb_ids(rita) and hr.pk in access.readable_kb_ids(rita)
    assert hr.pk not in access.editable_kb_ids(world["users"]["victor"])
    # A view grant to the user and a read grant to one of its groups: the higher one counts.
    team = Group.objects.create(name="hr-readers")
    vera.groups.add(team)
    services.kb_grant(kb=hr, group=team, access=KbAccess.READ)
    assert hr.pk in access.readable_kb_ids(vera)


def test_retrieve_gives_a_view_grant_the_snippets(world):
    for name in ("vera", "rita"):
        response = _api(world["users"][name]).post("/api/kb/retrieve/", {"query": QUESTION, "kb": [world["hr"].pk]},
                                                   format="json")
        assert response.status_code == 200 and MARKER in _text(response), name


def test_documents_download_and_reader_refuse_a_view_grant(world):
    vera, rita, doc, hr = world["users"]["vera"], world["users"]["rita"], world["doc"], world["hr"]
    for user, sees in ((vera, False), (rita, True)):
        api = _api(user)
        assert (MARKER in _text(api.get("/api/kb/documents/"))) is sees
        assert api.get(f"/api/kb/documents/?kb={hr.pk}").status_code == (200 if sees else 404)
        assert api.get(f"/api/kb/documents/{doc.pk}/").status_code == (200 if sees else 404)
        download = api.get(f"/api/kb/documents/{doc.pk}/file/")
        assert download.status_code == (200 if sees else 404)
        browser = Client()
        browser.force_login(user)
        reader = browser.get(f"/documents/{doc.pk}/")
        assert reader.status_code == (200 if sees else 404) and (MARKER in _text(reader)) is sees
        page = _text(browser.get("/"))
        assert "HR" in page  # the base to ask is offered either way
        assert (f"人事手册{MARKER}" in page) is sees  # a document to read whole is not


def test_the_kb_api_shows_a_view_base_with_its_level_and_refuses_changes(world):
    vera, hr = world["users"]["vera"], world["hr"]
    api = _api(vera)
    listed = {kb["name"]: kb for kb in api.get("/api/kbs/").json()}
    assert listed["HR"]["access"] == "view" and listed["HR"]["can_edit"] is False
    assert {kb["name"]: kb["access"] for kb in _api(world["users"]["rita"]).get("/api/kbs/").json()}["HR"] == "read"
    assert api.get(f"/api/kbs/{hr.pk}/").status_code == 200
    assert api.get(f"/api/kbs/{hr.pk}/grants/").status_code == 403
    assert api.patch(f"/api/kbs/{hr.pk}/", {"description": "x"}, format="json").status_code == 403
    upload = api.post("/api/kb/documents/", {"kb": hr.pk, "file": _file()}, format="multipart")
    assert upload.status_code == 403


def _file():
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("note.md", b"# note\n\nsome text", content_type="text/markdown")


def _ask(user, message: str, **kwargs) -> tuple[list, str]:
    events = list(ChatPipeline().run(user=user, message=message, cancel=threading.Event(), **kwargs))
    return events, json.dumps([e.to_ws() for e in events], ensure_ascii=False)


def test_chat_answers_a_view_grant_with_citations_but_never_reads_a_document_whole(world):
    vera, doc = world["users"]["vera"], world["doc"]
    events, text = _ask(vera, QUESTION)
    done = next(e for e in events if e.type == "done").data
    assert MARKER in text and done["citations"], text
    _, refused = _ask(vera, "总结这个文档", document_id=doc.pk)
    assert '"document_not_found"' in refused and MARKER not in refused
    _, allowed = _ask(world["users"]["rita"], "总结这个文档", document_id=doc.pk)
    assert MARKER in allowed


async def test_sse_chat_answers_a_view_grant(world):
    vera = world["users"]["vera"]
    token, _ = await sync_to_async(Token.objects.get_or_create)(user=vera)
    response = await AsyncClient().post("/api/chat/", json.dumps({"message": QUESTION, "kb": [world["hr"].pk]}),
                                        content_type="application/json",
                                        headers={"Authorization": f"Token {token.key}"})
    raw = b"".join([c async for c in response.streaming_content]).decode()
    assert response.status_code == 200 and MARKER in raw and "event: done" in raw


def test_mcp_searches_for_a_view_grant_but_lists_and_reads_no_original(world):
    vera, rita, hr, doc = world["users"]["vera"], world["users"]["rita"], world["hr"], world["doc"]
    assert MARKER in json.dumps(tools.search_kb(vera, query=QUESTION, kb=[hr.pk]), ensure_ascii=False)
    assert MARKER in json.dumps(tools.keyword_search(vera, query=MARKER, kb=[hr.pk]), ensure_ascii=False)
    assert [k["name"] for k in tools.list_knowledge_bases(vera)["knowledge_bases"]] == ["HR"]
    with pytest.raises(tools.ToolInputError):
        tools.list_documents(vera, kb=[hr.pk])
    assert tools.list_documents(vera)["documents"] == []
    with pytest.raises(tools.ToolInputError):
        tools.read_section(vera, document_id=doc.pk)
    assert MARKER in tools.read_section(rita, document_id=doc.pk)["content"]
    assert tools.list_documents(rita, kb=[hr.pk])["documents"]


@pytest.mark.parametrize("path", ["/admin/kb/document/", "/admin/kb/chunk/", "/admin/kb/knowledgebase/"])
def test_the_admin_shows_a_view_grant_nothing_of_the_base(world, path):
    for name, sees in (("victor", False), ("ralph", True)):
        browser = Client()
        browser.force_login(world["users"][name])
        page = browser.get(path, follow=True)
        assert page.status_code == 200
        # The base's own change link, not its two-letter name: "HR" turns up in a random CSRF token once in ~60 pages.
        shown = f"/admin/kb/knowledgebase/{world['hr'].pk}/change/" in _text(page)
        assert ((MARKER in _text(page)) or (shown and path.endswith("knowledgebase/"))) is sees, name
    browser = Client()
    browser.force_login(world["users"]["victor"])
    change = browser.get(f"/admin/kb/document/{world['doc'].pk}/change/", follow=True)
    assert MARKER not in _text(change)


def test_the_grants_api_gives_and_lists_a_view_grant(world, admin_user):
    api = _api(admin_user)
    hr = world["hr"]
    response = api.post(f"/api/kbs/{hr.pk}/grants/", {"user": "rita", "access": "view"}, format="json")
    assert response.status_code == 201 and response.json()["access"] == "view"
    assert hr.pk not in access.readable_kb_ids(world["users"]["rita"])
    assert hr.pk in access.askable_kb_ids(world["users"]["rita"])
    assert api.post(f"/api/kbs/{hr.pk}/grants/", {"user": "rita", "access": "own"}, format="json").status_code == 400


async def test_the_websocket_chat_answers_a_view_grant_but_reads_no_document_whole(world):
    from tests.security.test_kb_isolation import _ws_ask

    vera = world["users"]["vera"]
    assert MARKER in await _ws_ask(vera, {"message": QUESTION})
    refused = await _ws_ask(vera, {"message": "总结这个文档", "document_id": world["doc"].pk})
    assert '"document_not_found"' in refused and MARKER not in refused


# Citations: a view grant gets the snippet and its place with no link (the reader answers it 404); a read grant
# gets a link that opens the reader at the passage. Every card must carry the field, so a payload without links
# for anyone cannot pass.

def _cards(start: dict, done: dict) -> list[dict]:
    cards = [c for c in [*start["sources"], *done["citations"]] if c.get("source") == "KB"]
    assert cards and all("reader_url" in c for c in cards)
    return cards


def _check_links(world, user, cards: list[dict], *, opens: bool) -> None:
    doc = world["doc"]
    if not opens:
        assert all(c["reader_url"] is None for c in cards)
        return
    assert all(c["reader_url"].startswith(f"/documents/{doc.pk}/") for c in cards)
    browser = Client()
    browser.force_login(user)
    page = browser.get(cards[0]["reader_url"].split("#")[0])
    assert page.status_code == 200 and MARKER in _text(page)


def _start_and_done(events: list[dict]) -> tuple[dict, dict]:
    by_type = {e["type"]: e["data"] for e in events}
    return by_type["start"], by_type["done"]


@pytest.mark.parametrize(("name", "opens"), [("vera", False), ("rita", True)])
def test_chat_citations_link_to_the_reader_only_for_a_read_grant(world, name, opens):
    user = world["users"][name]
    events, _ = _ask(user, QUESTION)
    start, done = _start_and_done([e.to_ws() for e in events])
    cards = _cards(start, done)
    assert any(MARKER in c.get("content", "") for c in start["sources"])  # the snippet itself is given
    _check_links(world, user, cards, opens=opens)


def _sse_events(raw: str) -> list[dict]:
    events = []
    for block in raw.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if line.startswith(("event: ", "data: ")))
        if "event" in lines:
            events.append({"type": lines["event"], "data": json.loads(lines["data"])})
    return events


@pytest.mark.parametrize(("name", "opens"), [("vera", False), ("rita", True)])
async def test_sse_citations_link_to_the_reader_only_for_a_read_grant(world, name, opens):
    user = world["users"][name]
    token, _ = await sync_to_async(Token.objects.get_or_create)(user=user)
    response = await AsyncClient().post("/api/chat/", json.dumps({"message": QUESTION}),
                                        content_type="application/json",
                                        headers={"Authorization": f"Token {token.key}"})
    raw = b"".join([c async for c in response.streaming_content]).decode()
    start, done = _start_and_done(_sse_events(raw))
    await sync_to_async(_check_links)(world, user, _cards(start, done), opens=opens)


@pytest.mark.parametrize(("name", "opens"), [("vera", False), ("rita", True)])
async def test_websocket_citations_link_to_the_reader_only_for_a_read_grant(world, name, opens):
    from tests.security.test_kb_isolation import _ws_ask

    user = world["users"][name]
    start, done = _start_and_done(json.loads(await _ws_ask(user, {"message": QUESTION})))
    await sync_to_async(_check_links)(world, user, _cards(start, done), opens=opens)


def test_a_conversation_read_back_links_as_the_grant_is_now(world):
    rita, hr = world["users"]["rita"], world["hr"]
    events, _ = _ask(rita, QUESTION)
    conversation_id = next(e for e in events if e.type == "done").data["conversation_id"]

    def read_back() -> list[dict]:
        answer = _api(rita).get(f"/api/conversations/{conversation_id}/").json()["messages"][-1]
        return _cards({"sources": answer["retrieval_log"]["sources"]}, {"citations": answer["citations"]})

    _check_links(world, rita, read_back(), opens=True)
    services.kb_grant(kb=hr, user=rita, access=KbAccess.VIEW)  # the saved answer outlives the read grant
    _check_links(world, rita, read_back(), opens=False)


# Evidence text: a view grant gets of each chunk no more than a source card's snippet of the passage that matched
# (the child's own text), a read grant the longer text it always got. The document below has one parent of several
# children: the drill password and the spare password sit in neighbouring children of that parent, so only text
# beyond a single child carries both — which the read grant must get and the view grant never.

SNIP, FAR = "SNIPMARKQX", "FARMARKQX"
DRILL_QUESTION = "消防演练的集合口令是什么？"
_TOPICS = ("叉车作业", "货架检查", "消防通道", "夜间值班", "访客登记", "温湿度记录", "危险品存放", "包装回收",
           "月度盘点")


def _rule(number: int, topic: str) -> str:
    return (f"仓库守则第{number}条讲的是{topic}：负责这一项的同事每天早上先核对上一班留下的记录，再按清单逐项检查现场"
            "情况，包括地面、照明、标识和应急器材是否齐全可用，发现问题当场拍照并写进交接本，下班前由主管签字确认后归档保存。")


@pytest.fixture
def drill(world):
    from kb.ingestion.worker import process_pending_documents
    from kb.models import Chunk, ChunkLevel

    text = "".join([_rule(1, _TOPICS[0]), f"消防演练的集合口令是{SNIP}，" + _rule(2, _TOPICS[1]),
                    f"备用口令是{FAR}，" + _rule(3, _TOPICS[2]),
                    *(_rule(n, topic) for n, topic in enumerate(_TOPICS[3:], start=4))])
    doc, _ = services.document_ingest_text(title="仓库守则", text=text, domain="policy", kb=world["hr"])
    process_pending_documents()
    children = list(Chunk.objects.filter(level=ChunkLevel.CHILD).values_list("content", flat=True))
    parents = list(Chunk.objects.filter(document=doc, level=ChunkLevel.PARENT).values_list("content", flat=True))
    # The premise: no child holds both passwords, the parent does.
    assert not any(SNIP in c and FAR in c for c in children) and any(SNIP in p and FAR in p for p in parents)
    return {**world, "drill": doc, "children": children}


def _assert_snippets_only(cards: list[dict], children: list[str]) -> None:
    kb_cards = [c for c in cards if c.get("source", "KB") == "KB"]
    assert kb_cards
    for card in kb_cards:
        assert len(card["content"]) <= SNIPPET_CHARS and any(card["content"] in child for child in children), card
        assert not (SNIP in card["content"] and FAR in card["content"])
        assert "snippet" not in card


def _assert_parent_text(cards: list[dict]) -> None:
    assert any(SNIP in c["content"] and FAR in c["content"] for c in cards), cards


def _check_evidence(drill, name: str, cards: list[dict]) -> None:
    if name == "vera":
        _assert_snippets_only(cards, drill["children"])
    else:
        _assert_parent_text(cards)


def _check_contract(name: str, events: list[dict]) -> None:
    """The events follow the contract, and its view-only variant exactly for the view grant (rita's longer evidence
    and reader links break it, so the check is not one every stream passes)."""
    assert_events_follow_the_contract(events, view_only=name == "vera")
    if name == "rita":
        with pytest.raises(ValidationError, match="view-only asker"):
            for event in events:
                validate_event(event["type"], event["data"], view_only=True)


def _retrieval(events: list[dict]) -> dict:
    return next(e["data"] for e in events if e["type"] == "retrieval")


@pytest.mark.parametrize("name", ["vera", "rita"])
def test_the_chat_trace_gives_a_view_grant_only_snippets(drill, name):
    events, _ = _ask(drill["users"][name], DRILL_QUESTION)
    trace = _retrieval([e.to_ws() for e in events])
    _check_evidence(drill, name, trace["kb_chunks"])


@pytest.mark.parametrize("name", ["vera", "rita"])
async def test_the_sse_trace_gives_a_view_grant_only_snippets(drill, name):
    user = drill["users"][name]
    token, _ = await sync_to_async(Token.objects.get_or_create)(user=user)
    response = await AsyncClient().post("/api/chat/", json.dumps({"message": DRILL_QUESTION}),
                                        content_type="application/json",
                                        headers={"Authorization": f"Token {token.key}"})
    raw = b"".join([c async for c in response.streaming_content]).decode()
    _check_evidence(drill, name, _retrieval(_sse_events(raw))["kb_chunks"])
    _check_contract(name, _sse_events(raw))


@pytest.mark.parametrize("name", ["vera", "rita"])
async def test_the_websocket_trace_gives_a_view_grant_only_snippets(drill, name):
    from tests.security.test_kb_isolation import _ws_ask

    events = json.loads(await _ws_ask(drill["users"][name], {"message": DRILL_QUESTION}))
    _check_evidence(drill, name, _retrieval(events)["kb_chunks"])
    _check_contract(name, events)


@pytest.mark.parametrize("name", ["vera", "rita"])
def test_retrieve_and_mcp_search_give_a_view_grant_only_snippets(drill, name):
    user, hr = drill["users"][name], drill["hr"]
    response = _api(user).post("/api/kb/retrieve/", {"query": DRILL_QUESTION, "kb": [hr.pk]}, format="json")
    assert response.status_code == 200
    _check_evidence(drill, name, response.json()["chunks"])
    _check_evidence(drill, name, tools.search_kb(user, query=DRILL_QUESTION, kb=[hr.pk])["chunks"])
    hits = tools.keyword_search(user, query=SNIP, kb=[hr.pk])["chunks"]
    assert any(SNIP in c["content"] for c in hits)
    # Keyword hits are children already: both grants get them, never longer than a snippet for a view grant.
    if name == "vera":
        _assert_snippets_only(hits, drill["children"])


def test_a_replayed_cached_answer_gives_a_view_grant_only_snippets(drill):
    vera = drill["users"]["vera"]
    _ask(vera, DRILL_QUESTION)
    events, _ = _ask(vera, DRILL_QUESTION)
    trace = _retrieval([e.to_ws() for e in events])
    assert trace["cached"] is True  # the premise: the second asking replays the first answer
    _assert_snippets_only(trace["kb_chunks"], drill["children"])


def test_a_conversation_read_back_gives_the_trace_as_the_grant_is_now(drill):
    rita, hr = drill["users"]["rita"], drill["hr"]
    events, _ = _ask(rita, DRILL_QUESTION)
    conversation_id = next(e for e in events if e.type == "done").data["conversation_id"]

    def saved_evidence() -> list[dict]:
        return _api(rita).get(f"/api/conversations/{conversation_id}/").json()["messages"][-1]["retrieval_log"][
            "kb_chunks"]

    read = saved_evidence()
    _assert_parent_text(read)
    assert all("snippet" not in c for c in read)
    services.kb_grant(kb=hr, user=rita, access=KbAccess.VIEW)
    _assert_snippets_only(saved_evidence(), drill["children"])


def test_an_ask_key_gets_only_snippets_and_a_read_key_the_text(drill):
    from apikeys.services import key_create
    from docmind.roles import KB_EDITOR, user_set_role

    hr, eddie = drill["hr"], drill["users"]["ralph"]
    user_set_role(user=eddie, role=KB_EDITOR)
    services.kb_grant(kb=hr, user=eddie, access=KbAccess.EDIT)
    ask = key_create(creator=eddie, name="ask", kb_ids=[hr.pk], scope="ask").secret
    read = key_create(creator=eddie, name="read", kb_ids=[hr.pk], scope="read").secret

    async def sse(secret: str) -> list[dict]:
        response = await AsyncClient().post("/api/chat/", json.dumps({"message": DRILL_QUESTION}),
                                            content_type="application/json",
                                            headers={"Authorization": f"Bearer {secret}"})
        return _sse_events(b"".join([c async for c in response.streaming_content]).decode())

    from asgiref.sync import async_to_sync

    _assert_snippets_only(_retrieval(async_to_sync(sse)(ask))["kb_chunks"], drill["children"])
    _assert_parent_text(_retrieval(async_to_sync(sse)(read))["kb_chunks"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {read}")
    _assert_parent_text(client.post("/api/kb/retrieve/", {"query": DRILL_QUESTION}, format="json").json()["chunks"])

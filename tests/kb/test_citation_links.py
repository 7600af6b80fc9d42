"""A citation links to the reader only for a document whose original its asker may read; the link opens the
reader at the cited page, chunk and revision."""
from __future__ import annotations

import pytest

from kb import services
from kb.access import KEY_SCOPE_ATTR, KeyScope
from kb.citation_links import CitationLinks, reader_url
from kb.models import KbAccess

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("kwargs", "url"), [
    ({"document_id": 7}, "/documents/7/#cited"),
    ({"document_id": 7, "chunk_id": "31", "revision": 2}, "/documents/7/?chunk=31&rev=2#cited"),
    ({"document_id": 7, "chunk_id": "31", "location": {"page": 3, "boxes": []}, "revision": 0},
     "/documents/7/?page=3&chunk=31&rev=0#cited"),
    # A chunk id that is not a number (web evidence's hashes) and a revision without a chunk are left out.
    ({"document_id": 7, "chunk_id": "ab12", "revision": 1}, "/documents/7/#cited"),
    ({"document_id": 7, "location": {"sheet": "价格表", "rows": [4, 9]}}, "/documents/7/#cited"),
])
def test_the_reader_url_opens_the_cited_page_chunk_and_revision(kwargs, url):
    assert reader_url(**kwargs) == url


@pytest.fixture
def base(member):
    hr = services.kb_create(name="HR-links")
    document, _ = services.document_ingest_text(title="手册", text="年假需要提前一周申请。", domain="policy", kb=hr)
    return hr, document


def _card(document, **extra) -> dict:
    return {"index": 1, "chunk_id": "5", "document_id": document.pk, "document_title": "手册", "source": "KB",
            "content": "年假需要提前一周申请。", "location": {"page": 2}, **extra}


def test_a_read_grant_gets_the_link_and_a_view_grant_the_snippet_alone(base, member):
    hr, document = base
    services.kb_grant(kb=hr, user=member, access=KbAccess.READ)
    [card] = CitationLinks(member).apply([_card(document, revision=0)])
    assert card["reader_url"] == f"/documents/{document.pk}/?page=2&chunk=5&rev=0#cited"
    services.kb_grant(kb=hr, user=member, access=KbAccess.VIEW)
    [card] = CitationLinks(member).apply([_card(document)])
    assert card["reader_url"] is None and card["content"] == "年假需要提前一周申请。"


def test_an_ask_only_key_gets_no_link_where_its_creator_would(base, member):
    hr, document = base
    services.kb_grant(kb=hr, user=member, access=KbAccess.READ)
    setattr(member, KEY_SCOPE_ATTR, KeyScope(key_id=1, kb_ids=frozenset({hr.pk}), scope="ask"))
    assert CitationLinks(member).apply([_card(document)])[0]["reader_url"] is None
    setattr(member, KEY_SCOPE_ATTR, KeyScope(key_id=1, kb_ids=frozenset({hr.pk}), scope="read"))
    assert CitationLinks(member).apply([_card(document)])[0]["reader_url"]


def test_a_stored_link_is_replaced_and_web_evidence_keeps_its_own_address(base, member):
    hr, document = base
    services.kb_grant(kb=hr, user=member, access=KbAccess.VIEW)
    web = {"index": 2, "chunk_id": "w1", "document_id": None, "source": "WEB", "url": "https://example.test/a"}
    stale, linked_web = CitationLinks(member).apply([_card(document, reader_url="/documents/1/#cited"), web])
    assert stale["reader_url"] is None
    assert linked_web["reader_url"] is None and linked_web["url"] == "https://example.test/a"


def test_each_document_is_looked_up_once_per_asker(base, member, django_assert_num_queries):
    hr, document = base
    services.kb_grant(kb=hr, user=member, access=KbAccess.READ)
    links = CitationLinks(member)
    links.apply([_card(document)])
    with django_assert_num_queries(0):
        again = links.apply([_card(document), _card(document, index=2, chunk_id="6")])
    assert all(card["reader_url"] for card in again)


def test_an_inactive_or_anonymous_asker_gets_no_link(base, member):
    from django.contrib.auth.models import AnonymousUser

    hr, document = base
    services.kb_grant(kb=hr, user=member, access=KbAccess.READ)
    assert CitationLinks(AnonymousUser()).apply([_card(document)])[0]["reader_url"] is None
    member.is_active = False
    member.save(update_fields=["is_active"])
    assert CitationLinks(member).apply([_card(document)])[0]["reader_url"] is None

"""The document reader and the original file: signed-in only, opened at the cited passage, never public media."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from kb.ingestion.worker import process_pending_documents
from kb.models import Chunk, ChunkLevel, Document
from kb.reader import split_sections
from tests.kb.ingestion.files import ocr_available

pytestmark = pytest.mark.django_db

TEXT = ("# 退款规则\n\n退款申请提交后，系统在三个工作日内原路退回。超过七天未到账，请联系客服并提供订单号。\n\n"
        "## 例外\n\n使用优惠券的订单，优惠券部分不予退还，只退实付金额。").encode()


@pytest.fixture
def document(editor_client, kb_index):
    body = editor_client.post("/api/kb/documents/", {"file": SimpleUploadedFile("refund.md", TEXT)},
                              format="multipart").json()
    process_pending_documents()
    return Document.objects.get(pk=body["id"])


def _browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_reader_marks_the_cited_passage_and_offers_the_download(member, document):
    child = Chunk.objects.filter(document=document, level=ChunkLevel.CHILD, content__contains="优惠券").first()
    page = _browser(member).get(f"/documents/{document.pk}/?chunk={child.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count('id="cited"') == 1
    marked = html.split('id="cited" class="cited-passage">', 1)[1].split("</mark>", 1)[0]
    assert "优惠券" in marked
    assert f"/api/kb/documents/{document.pk}/file/" in html


def test_the_reader_renders_the_markdown_and_titles_an_upload_by_its_heading(member, document):
    html = _browser(member).get(f"/documents/{document.pk}/").content.decode()
    assert '<h1 class="reader-title">退款规则</h1>' in html  # uploaded as refund.md, without a title
    assert "<h2>例外</h2>" in html and "## 例外" not in html


def test_an_upload_whose_title_heading_has_no_text_of_its_own_is_titled_by_it(editor_client, member, kb_index):
    text = "# 差旅管理制度\n\n## 订票\n\n机票和酒店须在出发前7天通过差旅平台预订，晚于此须经总监批准。\n".encode()
    body = editor_client.post("/api/kb/documents/", {"file": SimpleUploadedFile("travel-policy.md", text)},
                              format="multipart").json()
    process_pending_documents()
    html = _browser(member).get(f"/documents/{body['id']}/").content.decode()
    assert '<h1 class="reader-title">差旅管理制度</h1>' in html and "<h2>订票</h2>" in html


def test_document_text_is_escaped_in_the_reader(editor_client, member, kb_index):
    body = editor_client.post("/api/kb/documents/", {"file": SimpleUploadedFile(
        "x.txt", "说明：<script>alert(1)</script> 这是一段足够长的正文，用来检验转义。".encode())},
        format="multipart").json()
    process_pending_documents()
    html = _browser(member).get(f"/documents/{body['id']}/").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;" in html


def test_a_chunk_of_another_document_highlights_nothing():
    parent = Chunk(pk=1, level=ChunkLevel.PARENT, content="甲乙丙")
    other = Chunk(pk=9, level=ChunkLevel.CHILD, parent_id=99, content="乙")
    assert [s.is_cited for s in split_sections([parent], other)] == [False]
    own = Chunk(pk=2, level=ChunkLevel.CHILD, parent_id=1, content="乙")
    assert [(s.before, s.cited, s.after) for s in split_sections([parent], own)] == [("甲", "乙", "丙")]


def test_the_original_file_downloads_for_a_signed_in_user_with_a_token(member, document):
    api = APIClient()
    api.force_authenticate(member)
    response = api.get(f"/api/kb/documents/{document.pk}/file/")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == TEXT
    assert "attachment" in response["Content-Disposition"]


def test_anonymous_callers_get_neither_the_reader_nor_the_file(document):
    assert Client().get(f"/documents/{document.pk}/").status_code == 302  # to the sign-in page
    assert APIClient().get(f"/api/kb/documents/{document.pk}/file/").status_code in (401, 403)
    assert Client().get("/media/" + document.file.name).status_code == 404


def test_unknown_documents_are_404(member):
    assert _browser(member).get("/documents/999999/").status_code == 404
    api = APIClient()
    api.force_authenticate(member)
    assert api.get("/api/kb/documents/999999/file/").status_code == 404


def test_the_admin_links_the_file_to_the_authenticated_download(admin_user, document):
    html = _browser(admin_user).get(f"/admin/kb/document/{document.pk}/change/").content.decode()
    assert f"/api/kb/documents/{document.pk}/file/" in html
    assert "/media/" not in html


@pytest.fixture
def pdf_document(editor_client, kb_index):
    from tests.kb.ingestion.files import two_column_pdf

    body = editor_client.post("/api/kb/documents/", {"file": SimpleUploadedFile("manual.pdf", two_column_pdf())},
                              format="multipart").json()
    process_pending_documents()
    return Document.objects.get(pk=body["id"])


def test_the_reader_shows_the_cited_pdf_page_with_the_passage_marked(member, pdf_document):
    child = Chunk.objects.filter(document=pdf_document, level=ChunkLevel.CHILD, content__contains="每90天").first()
    page = _browser(member).get(f"/documents/{pdf_document.pk}/?page=1&chunk={child.pk}")
    assert page.status_code == 200
    html = page.content.decode()
    assert f"/documents/{pdf_document.pk}/pages/1.png" in html
    assert "第 1 页，共 2 页" in html and "引用段落在原文中的位置：第 1 页" in html  # the default language
    # The first line was drawn at x = 50 pt of a 595 pt wide page: 8.40 % from the left.
    assert html.count('class="page-mark"') == 5 and 'x="8.40"' in html
    assert 'style="' not in html.split('class="page-canvas"')[1].split("</figure>")[0]  # the CSP allows none


def test_the_page_image_is_a_png_rendered_once_and_only_for_readers(member, other_member, pdf_document):
    response = _browser(member).get(f"/documents/{pdf_document.pk}/pages/2.png")
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content).startswith(b"\x89PNG")
    from kb.pages import page_image

    assert page_image(pdf_document, 2).exists()  # cached on disk
    assert _browser(member).get(f"/documents/{pdf_document.pk}/pages/3.png").status_code == 404
    assert Client().get(f"/documents/{pdf_document.pk}/pages/1.png").status_code == 302


@pytest.fixture
def image_document(editor_client, kb_index):
    from tests.kb.ingestion.files import png_bytes, text_image

    notice = png_bytes(text_image(["春节期间门诊时间调整", "2月15日上午8:00至12:00开诊"]))
    body = editor_client.post("/api/kb/documents/", {"file": SimpleUploadedFile("notice.png", notice)},
                              format="multipart").json()
    process_pending_documents()
    return Document.objects.get(pk=body["id"])


@pytest.mark.skipif(not ocr_available(), reason="needs Debian tesseract-ocr, tesseract-ocr-chi-sim and fonts-noto-cjk")
def test_an_uploaded_image_is_shown_as_its_page_with_the_recognised_line_marked(member, image_document):
    child = Chunk.objects.filter(document=image_document, level=ChunkLevel.CHILD).first()
    page = _browser(member).get(f"/documents/{image_document.pk}/?page=1&chunk={child.pk}")
    html = page.content.decode()
    assert f"/documents/{image_document.pk}/pages/1.png" in html and 'class="page-mark"' in html
    picture = _browser(member).get(f"/documents/{image_document.pk}/pages/1.png")
    assert picture.status_code == 200 and picture["Content-Type"] == "image/png"
    assert b"".join(picture.streaming_content).startswith(b"\x89PNG")
    assert _browser(member).get(f"/documents/{image_document.pk}/pages/2.png").status_code == 404


def test_a_text_document_has_no_page_image(member, document):
    assert _browser(member).get(f"/documents/{document.pk}/pages/1.png").status_code == 404
    assert "page-canvas" not in _browser(member).get(f"/documents/{document.pk}/?page=1").content.decode()


def test_deleting_a_document_removes_its_page_images(member, pdf_document, django_capture_on_commit_callbacks):
    from kb.pages import page_image
    from kb.services import document_delete

    rendered = page_image(pdf_document, 1)
    assert rendered.exists()
    with django_capture_on_commit_callbacks(execute=True):
        document_delete(document=pdf_document)
    assert not rendered.exists()


def test_a_cited_chunk_over_two_pages_is_highlighted_on_either_page():
    from kb.reader import _boxes_on

    location = {"page": 1, "boxes": [[1, 2, 3, 4]],
                "parts": [{"page": 1, "start": 0, "end": 5, "boxes": [[1, 2, 3, 4]]},
                          {"page": 2, "start": 5, "end": 9, "boxes": [[5, 6, 7, 8]]}]}
    assert _boxes_on(location, 1) == [[1, 2, 3, 4]]
    assert _boxes_on(location, 2) == [[5, 6, 7, 8]]
    assert _boxes_on(location, 3) == []


def test_a_saved_page_opening_with_a_banner_heading_is_titled_by_its_h1(editor_client, member, kb_index):
    page = ("<html><body><div class='promo'><h2>新店开业限时福利</h2><p>扫码添加店长微信，领取7天免费体验券。</p></div>"
            "<h1>力行健身会员卡章程</h1><p>适用门店：万象城店，生效日期：2024年7月1日。</p>"
            "<h2>营业时间</h2><p>周一至周五6:30至22:30，周六、周日8:00至21:00。</p></body></html>").encode()
    body = editor_client.post("/api/kb/documents/", {"file": SimpleUploadedFile("gym-membership.html", page)},
                              format="multipart").json()
    process_pending_documents()
    html = _browser(member).get(f"/documents/{body['id']}/").content.decode()
    assert '<h1 class="reader-title">力行健身会员卡章程</h1>' in html

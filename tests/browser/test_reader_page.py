"""The document reader in headless Chromium: a cited PDF passage is marked on the page image, under the page's CSP."""
from __future__ import annotations

import pytest

from tests.browser.chromium import require_chromium, signed_in_chat
from tests.browser.live_server import LiveServer

pytestmark = pytest.mark.browser

# Writes the two-page PDF of the ingestion tests to a file in the server's data dir and ingests it; prints the
# document's id and the id of the child chunk holding "每90天".
PDF_SETUP = """
from pathlib import Path
from django.conf import settings
from kb.ingestion.worker import process_pending_documents
from kb.models import Chunk, ChunkLevel
from kb.services import document_ingest_path
from tests.kb.ingestion.files import two_column_pdf
path = Path(settings.DATA_DIR) / "policy.pdf"
path.write_bytes(two_column_pdf())
document, _ = document_ingest_path(path=path, title="policy")
process_pending_documents()
child = Chunk.objects.filter(document=document, level=ChunkLevel.CHILD, content__contains="每90天").first()
print(f"ids {document.pk} {child.pk}")
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory, migrated_data_dir):
    require_chromium()
    live = LiveServer(data_dir=tmp_path_factory.mktemp("reader-data"))
    live.prepare(template=migrated_data_dir)
    out = live.apply(then=PDF_SETUP)
    live.ids = next(line.split()[1:] for line in out.splitlines() if line.startswith("ids "))
    live.start()
    yield live
    live.stop()


def test_the_cited_pdf_passage_is_marked_over_its_lines_on_the_page_image(server, browser):
    from playwright.sync_api import expect

    document_id, chunk_id = server.ids
    page = signed_in_chat(browser, server)
    blocked: list[str] = []
    page.on("console", lambda msg: blocked.append(msg.text) if "Content Security Policy" in msg.text else None)
    page.set_viewport_size({"width": 900, "height": 700})
    page.goto(f"{server.url}/documents/{document_id}/?page=1&chunk={chunk_id}")
    image = page.locator(".page-canvas img")
    expect(image).to_be_visible()
    page.wait_for_function("document.querySelector('.page-canvas img').complete")
    marks = page.locator(".page-mark")
    assert marks.count() >= 1
    picture, first = image.bounding_box(), marks.first.bounding_box()
    # A box of the cited lines, inside the page and away from its corner (not a zero-size mark at 0, 0).
    assert first["width"] > 20 and first["height"] > 5
    assert picture["x"] < first["x"] < picture["x"] + picture["width"] / 2
    assert picture["y"] < first["y"] < picture["y"] + picture["height"]
    assert blocked == []

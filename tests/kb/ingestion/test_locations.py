"""Chunk provenance: a chunk's place in the original from the parser's located spans, stored on the chunk."""
import pytest
from django.core.files.base import ContentFile

from kb.ingestion.locations import SpanLocator, cited_location, public_location, quoted_from, rank_quotes
from kb.models import Chunk, ChunkLevel, DocumentStatus
from tests.kb.ingestion.files import two_column_pdf, xlsx_bytes

LINE_1 = {"page": 1, "boxes": [[50, 70, 260, 85]]}
LINE_2 = {"page": 1, "boxes": [[50, 87, 260, 101]]}
NEXT_PAGE = {"page": 2, "boxes": [[50, 70, 200, 85]]}


def test_a_chunk_is_located_on_its_first_page_with_the_boxes_of_its_lines_there():
    locate = SpanLocator([(0, 10, LINE_1), (10, 20, LINE_2), (22, 30, NEXT_PAGE)]).locate
    located = locate(5, 28)
    assert public_location(located) == {"page": 1, "boxes": [[50, 70, 260, 85], [50, 87, 260, 101]]}
    # The parts tile the chunk: the unlocated gap (15–17) goes with the page before it.
    assert located["parts"] == [{"page": 1, "start": 0, "end": 17, "boxes": [[50, 70, 260, 85], [50, 87, 260, 101]]},
                                {"page": 2, "start": 17, "end": 23, "boxes": [[50, 70, 200, 85]]}]
    assert locate(12, 15) == LINE_2
    assert locate(24, 26) == NEXT_PAGE


def _cited(location, text, quotes, question=""):
    return cited_location(location, text, rank_quotes(quotes, question, text))


def test_a_quote_names_the_page_it_comes_from_in_a_chunk_that_runs_over_two():
    text = "第一页的内容：访客须登记。\n样品寄送每5天进行一次。"
    split = text.index("样品")
    location = SpanLocator([(0, split, LINE_1), (split, len(text), NEXT_PAGE)]).locate(0, len(text))
    assert _cited(location, text, ["样品寄送每5天进行一次。[1]"]) == NEXT_PAGE
    assert _cited(location, text, ["- 访客须登记 [1]"]) == LINE_1
    # Several sentences cite the chunk: the one answering the question decides the page.
    quotes = ["访客须登记 [1]", "样品寄送每5天进行一次。[1]"]
    assert _cited(location, text, quotes, "样品多久寄送一次？") == NEXT_PAGE
    assert _cited(location, text, quotes, "访客要登记吗？") == LINE_1
    # A sentence that matches no page by half or more keeps the chunk's first page.
    assert _cited(location, text, ["完全无关的一句话[1]"]) == public_location(location)


ROW_1 = {"page": 2, "boxes": [[50, 96, 500, 118]]}
ROW_2 = {"page": 2, "boxes": [[50, 118, 500, 140]]}


def test_a_chunk_spanning_two_pages_cites_the_page_of_the_table_row_it_quotes():
    # Page 1 ends with a schedule sentence; page 2 opens with a table whose rows share its predicate only
    # through the question ("…多久进行一次？"), each phrase occurring once in the chunk.
    page_1 = "库存盘点每15天进行一次。本规定适用于全体员工。\n\n"
    row_1, row_2 = "| 访客登记 | 30天 | 质量管理部 |", "| 印章使用 | 15天 | 行政部 |"
    text = page_1 + "| 事项 | 周期 | 负责部门 |\n|---|---|---|\n" + row_1 + "\n" + row_2
    first, second = text.index(row_1), text.index(row_2)
    spans = [(0, len(page_1) - 2, LINE_1), (len(page_1), first - 1, ROW_1), (first, first + len(row_1), ROW_1),
             (second, len(text), ROW_2)]
    location = SpanLocator(spans).locate(0, len(text))
    assert location["page"] == 1
    # The offline answer quotes in document order: the page-1 sentence first, then the rows it took.
    quotes = ["- 库存盘点每15天进行一次。[1]", "- 访客登记 | 30天 | 质量管理部 | 印章使用 | 15天 | 行政部 | [1]"]
    rows = {"page": 2, "boxes": ROW_1["boxes"] + ROW_2["boxes"]}
    assert _cited(location, text, quotes, "访客登记多久进行一次？") == rows
    assert _cited(location, text, quotes, "库存盘点多久进行一次？")["page"] == 1


def test_the_quote_naming_the_questions_subject_outranks_one_sharing_only_common_words():
    text = "库存盘点每15天进行一次。数据备份每30天进行一次。| 访客登记 | 30天 |"
    quotes = ["库存盘点每15天进行一次。[1]", "| 访客登记 | 30天 | [1]"]
    assert rank_quotes(quotes, "访客登记多久进行一次？", text)[0].text == quotes[1]
    # Also where the common words occur once, as often as the subject: the rarer words decide.
    once = "库存盘点每15天进行一次。| 差旅报销 | 500天 |"
    quotes = ["库存盘点每15天进行一次。[1]", "| 差旅报销 | 500天 | [1]"]
    assert rank_quotes(quotes, "差旅报销多久进行一次？", once)[0].text == quotes[1]
    assert rank_quotes(quotes, "库存盘点多久进行一次？", once)[0].text == quotes[0]


def test_only_a_quote_long_enough_to_judge_decides_whether_it_comes_from_a_text():
    quotes = rank_quotes(["是。[1]", "样品寄送每5天进行一次。[1]"], "", "")
    assert quoted_from("样品寄送每5天进行一次。", quotes)
    assert not quoted_from("访客须在前台登记。", quotes)
    assert quoted_from("访客须在前台登记。", rank_quotes(["是。[1]"], "", ""))


def test_rows_of_one_sheet_merge_into_their_first_and_last():
    spans = [(0, 5, {"sheet": "价格表", "rows": [4, 4]}), (6, 9, {"sheet": "价格表", "rows": [9, 9]}),
             (10, 12, {"sheet": "说明", "rows": [1, 1]})]
    assert SpanLocator(spans).locate(0, 12) == {"sheet": "价格表", "rows": [4, 9]}


def test_text_without_a_known_place_has_no_location():
    assert SpanLocator([(0, 5, {"slide": 3})]).locate(6, 10) is None
    assert SpanLocator([(0, 5, {"slide": 3})]).locate(2, 10) == {"slide": 3}


@pytest.mark.django_db
def test_ingested_pdf_and_sheet_chunks_carry_their_location(kb_index):
    from kb.ingestion import worker
    from kb.services import document_create

    pdf, _ = document_create(uploaded_file=ContentFile(two_column_pdf(), name="手册.pdf"), domain="general")
    sheet, _ = document_create(uploaded_file=ContentFile(xlsx_bytes({"价格表": [["套餐", "价格"], ["基础版", "99元"]]}),
                                                         name="价格.xlsx"), domain="general")
    worker.process_pending_documents()
    pdf.refresh_from_db()
    assert pdf.status == DocumentStatus.READY, pdf.error
    children = list(Chunk.objects.filter(document=pdf, level=ChunkLevel.CHILD))
    # The whole short file is one chunk: it starts on page 1, so it has the boxes of page 1's five lines.
    wrapped = next(c for c in children if "每90天" in c.content)
    assert wrapped.location["page"] == 1
    assert sorted(round(box[0]) for box in wrapped.location["boxes"]) == [50, 50, 50, 320, 320]
    row = Chunk.objects.get(document=sheet, level=ChunkLevel.CHILD, content__contains="套餐: 基础版")
    assert row.location == {"sheet": "价格表", "rows": [1, 2]}


@pytest.mark.django_db
def test_a_page_that_could_not_be_read_is_reported_on_the_document(kb_index):
    import io

    from pypdf import PdfReader, PdfWriter

    from kb.ingestion import worker
    from kb.services import document_create
    from tests.kb.ingestion.files import scanned_pdf

    writer = PdfWriter()
    for part in (two_column_pdf(), scanned_pdf()):
        writer.append(PdfReader(io.BytesIO(part)))
    buffer = io.BytesIO()
    writer.write(buffer)
    document, _ = document_create(uploaded_file=ContentFile(buffer.getvalue(), name="mixed.pdf"), domain="general")
    worker.process_pending_documents()
    document.refresh_from_db()
    assert document.status == DocumentStatus.READY
    [warning] = document.metadata["parse_warnings"]
    assert warning.startswith("page 3 of 3 has no text layer and could not be read")

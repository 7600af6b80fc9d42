"""Source cards of the chat's retrieval event: each says where its passage is in the original."""
from chat.pipeline.payloads import source_cards
from docmind.evidence import ScoredChunk


def test_a_source_card_carries_its_chunks_location_and_a_web_card_none():
    pdf = ScoredChunk(chunk_id="3", content="密码每90天更换。", score=0.9, document_id=1, document_title="手册",
                      location={"page": 2, "boxes": [[50.0, 70.0, 260.0, 85.0]]})
    sheet = ScoredChunk(chunk_id="4", content="套餐: 基础版", score=0.8, document_id=2, document_title="价格",
                        location={"sheet": "价格表", "rows": [4, 9]})
    web = ScoredChunk(chunk_id="web-1", content="x", score=0.5, url="https://example.org/")
    cards = source_cards([pdf, sheet, web])
    assert [c["location"] for c in cards] == [{"page": 2, "boxes": [[50.0, 70.0, 260.0, 85.0]]},
                                              {"sheet": "价格表", "rows": [4, 9]}, None]
    assert [c["index"] for c in cards] == [1, 2, 3]

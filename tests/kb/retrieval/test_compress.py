"""ContextCompressor: dedupe, near-duplicates, windows centred on the hit, budget packing."""
from __future__ import annotations

import pytest

from docmind.evidence import EvidenceBudget
from kb.retrieval.compress import ContextCompressor
from tests.kb.retrieval.fakes import chunk


def _compressor(*, max_tokens: int = 3000, **kwargs) -> ContextCompressor:
    return ContextCompressor(**{"budget": EvidenceBudget(max_tokens), "window_chars": 200, "near_dup_jaccard": 0.85,
                                **kwargs})


@pytest.mark.parametrize("kwargs", [{"max_tokens": 0}, {"window_chars": 0}, {"near_dup_jaccard": 1.5}])
def test_it_rejects_bad_configuration(kwargs):
    with pytest.raises(ValueError):
        _compressor(**kwargs)


def test_exact_duplicates_by_key_keep_the_first():
    a = chunk("1", "甲乙丙", 0.9, parent_id=7)
    b = chunk("2", "丁戊己", 0.5, parent_id=7)
    assert _compressor().run(query="q", chunks=[a, b]).chunks == (a,)


def test_a_chunk_contained_in_a_better_one_is_dropped():
    big = chunk("1", "第一句话很长。第二句话也不短。", 0.9)
    small = chunk("2", "第二句话也不短", 0.5)
    assert _compressor().run(query="q", chunks=[big, small]).chunks == (big,)


def test_near_duplicates_by_bigram_jaccard_are_dropped_but_distinct_text_stays():
    a = chunk("1", "北京是中华人民共和国的首都，也是全国的政治中心和文化中心", 0.9)
    b = chunk("2", "北京是中华人民共和国的首都，也是全国的政治中心和文化中心！", 0.8)
    c = chunk("3", "上海是中国的经济中心", 0.7)
    assert [x.chunk_id for x in _compressor().run(query="q", chunks=[a, b, c]).chunks] == ["1", "3"]


def _long_text() -> str:
    sentences = [f"第{i:03d}句是一些填充文字用来把段落撑长。" for i in range(60)]
    sentences[40] = "答案在这里：珠穆朗玛峰高八千八百四十八米。"
    return "".join(sentences)


def test_the_window_is_centred_on_the_child_text_and_snapped_to_sentences():
    text = _long_text()
    hit = "答案在这里：珠穆朗玛峰高八千八百四十八米。"
    out = _compressor().window("q", chunk("1", text, child_content=hit))
    assert hit in out.content and len(out.content) <= 200
    assert out.content[-1] in "。！？；.!?\n"
    start = text.index(out.content)
    assert start == 0 or text[start - 1] == "。"


def test_without_child_text_the_window_finds_the_query_terms():
    out = _compressor().window("珠穆朗玛峰有多高", chunk("1", _long_text()))
    assert "珠穆朗玛峰" in out.content and len(out.content) <= 200


def test_without_any_hit_the_head_is_kept():
    text = _long_text()
    out = _compressor().window("完全无关", chunk("1", text))
    assert text.startswith(out.content) and len(out.content) <= 200


def test_short_chunks_are_untouched():
    c = chunk("1", "短文本。")
    assert _compressor().window("q", c) is c


def test_packing_skips_a_chunk_that_does_not_fit_and_tries_the_next():
    big = chunk("1", "长" * 150, 0.9)
    small = chunk("2", "短句一", 0.5)
    out = _compressor(max_tokens=100, window_chars=200).run(query="q", chunks=[big, small])
    assert out.chunks == (small,) and "skipped" in out.notes[0]


def test_a_budget_smaller_than_every_chunk_gives_no_evidence():
    out = _compressor(max_tokens=1).run(query="q", chunks=[chunk("1", "两字"), chunk("2", "三个字")])
    assert out.chunks == ()


def test_packed_chunks_stay_within_the_budget_as_the_prompt_renders_them():
    chunks = [chunk(str(i), f"第{i}段" + "内容" * 40, 1 - i / 100, document_title=f"员工手册第{i}版")
              for i in range(20)]
    out = _compressor(max_tokens=300).run(query="q", chunks=chunks)
    assert out.chunks and EvidenceBudget(300).cost(out.chunks) <= 300


def test_the_block_headers_count_against_the_budget():
    # Three 82-token texts fit 250 tokens as bare text, not with their numbered headers.
    chunks = [chunk(str(i), f"第{i}段" + "内容" * 40, 1 - i / 100, document_title="员工手册") for i in range(3)]
    out = _compressor(max_tokens=250).run(query="q", chunks=chunks)
    assert [c.chunk_id for c in out.chunks] == ["0", "1"]


def test_a_table_child_is_found_by_its_own_rows_not_by_the_header_it_repeats():
    header = "| 型号 | 功率 | 价格 |\n|---|---|---|\n"
    rows = [f"| M-{n} | {n * 10} W | {n * 100} 元 |\n" for n in range(1, 41)]
    text = header + "".join(rows)
    child = header + "".join(rows[36:])  # cut from the table's end, with the header repeated so it reads alone
    out = _compressor().window("q", chunk("1", text, child_content=child))
    assert "| M-40 | 400 W | 4000 元 |" in out.content
    assert "| M-1 | 10 W |" not in out.content


def test_a_child_whose_lines_all_repeat_in_the_parent_falls_back_to_its_opening():
    text = _long_text()
    out = _compressor().window("q", chunk("1", text, child_content="no line of this is in the parent"))
    assert text.startswith(out.content) and len(out.content) <= 200


def test_the_window_keeps_every_child_of_the_parent_that_retrieval_returned():
    header = "| 型号 | 功率 | 价格 |\n|---|---|---|\n"
    rows = [f"| M-{n} | {n * 10} W | {n * 100} 元 |\n" for n in range(1, 41)]
    text = header + "".join(rows)
    best, sibling = header + "".join(rows[2:4]), header + "".join(rows[6:8])
    out = _compressor().window("q", chunk("1", text, child_content=best, sibling_contents=(sibling,)))
    assert "| M-3 | 30 W |" in out.content and "| M-8 | 80 W | 800 元 |" in out.content
    assert len(out.content) <= 200


def test_children_farther_apart_than_the_window_are_kept_with_what_lies_between():
    text = _long_text()
    first, last = "第005句是一些填充文字用来把段落撑长。", "答案在这里：珠穆朗玛峰高八千八百四十八米。"
    out = _compressor().window("q", chunk("1", text, child_content=last, sibling_contents=(first,)))
    assert out.content.startswith(first) and out.content.endswith(last)
    assert out.content == text[text.index(first):text.index(last) + len(last)]

"""TextChunker: sizes, sentence boundaries (Chinese and English), headings, offsets."""
import pytest

from kb.ingestion.chunker import TextChunker

ZH = "这是第一句话，内容比较长一些。" * 120
EN = "This is an English sentence about chunking. " * 80


def test_it_rejects_children_larger_than_parents():
    with pytest.raises(ValueError):
        TextChunker(parent_chars=100, child_chars=200)


@pytest.mark.parametrize("text", [ZH, EN])
def test_parents_and_children_stay_near_their_target_sizes(text):
    parents = TextChunker(parent_chars=1000, child_chars=240).split(text)
    assert len(parents) >= 2
    for parent in parents[:-1]:
        assert 800 <= len(parent.content) <= 1200
        for child in parent.children:
            assert len(child.content) <= 300


def test_chinese_children_end_on_sentence_punctuation():
    parents = TextChunker(parent_chars=300, child_chars=80).split(ZH)
    for parent in parents:
        for child in parent.children:
            assert child.content.endswith("。")


def test_english_children_end_on_full_stops():
    parents = TextChunker(parent_chars=300, child_chars=100).split(EN)
    assert all(child.content.endswith(".") for p in parents for child in p.children)


def test_offsets_point_at_the_child_text_in_the_source():
    text = "# 标题\n" + ZH + "\n\n# Second\n" + EN
    for parent in TextChunker(parent_chars=400, child_chars=120).split(text):
        assert text[parent.start:parent.end] in parent.content
        for child in parent.children:
            assert text[child.start:child.end] == child.content


def test_a_heading_starts_a_new_parent_and_prefixes_later_ones():
    text = "# 第一章\n" + "甲乙丙丁。" * 300 + "\n# 第二章\n" + "戊己庚辛。" * 10
    parents = TextChunker(parent_chars=300, child_chars=80).split(text)
    assert parents[0].content.startswith("# 第一章")
    assert parents[1].content.startswith("# 第一章\n")  # continuation repeats its heading
    assert parents[-1].content.startswith("# 第二章")
    assert "戊" not in "".join(p.content for p in parents[:-1])


def test_a_sentence_without_punctuation_is_still_cut():
    parents = TextChunker(parent_chars=300, child_chars=80).split("无标点" * 400)
    assert all(len(c.content) <= 96 for p in parents for c in p.children)


MANUAL = ("# 支付失败排查手册\n\n## 适用范围\n本手册用于排查支付失败。值班工程师应先确认影响范围。\n\n"
          "## 一、支付超时\n支付请求默认超时时间为 30 秒。\n\n### 常见原因\n渠道侧拥塞或证书过期。\n\n"
          "## 二、重复扣款\n系统会在 T+1 日发起原路退款。\n")


def test_no_child_is_only_a_heading_or_the_title():
    parents = TextChunker(parent_chars=1000, child_chars=240).split(
        "支付失败排查手册\n" + MANUAL + "## 空章节\n\n## 三、尾声\n最后一句正文。", title="支付失败排查手册")
    children = [c.content.strip() for p in parents for c in p.children]
    assert children and all(not c.startswith("#") for c in children)
    assert "支付失败排查手册" not in children and "三、尾声" not in children
    assert "最后一句正文。" in children


def test_a_line_that_only_repeats_a_heading_is_no_child():
    # A PDF's title line before the same text as its first heading, and a table of contents.
    text = ("AC Series Air Purifiers: Product Specification Sheet\n\n"
            "## AC Series Air Purifiers: Product Specification Sheet\n\nContents\nWarranty\n\n"
            "The AC-300 weighs 8.5 kg.\n\n## Warranty\n\nThe AC-300 comes with a two-year warranty.")
    parents = TextChunker(parent_chars=1000, child_chars=240).split(text, title="prod-ac-series-en")
    children = [child.content for parent in parents for child in parent.children]
    assert children and all("weighs" in c or "two-year" in c for c in children)
    assert not any(c.strip() in ("AC Series Air Purifiers: Product Specification Sheet", "Warranty") for c in children)


def test_children_carry_the_title_and_section_path_as_context():
    parents = TextChunker(parent_chars=1000, child_chars=240).split(MANUAL, title="支付失败排查手册")
    by_text = {c.content: p.context for p in parents for c in p.children}
    assert by_text["本手册用于排查支付失败。值班工程师应先确认影响范围。"] == "支付失败排查手册 › 适用范围"
    # A deeper heading nests under its section; the H1 that repeats the title is not said twice.
    assert by_text["渠道侧拥塞或证书过期。"] == "支付失败排查手册 › 一、支付超时 › 常见原因"
    assert by_text["系统会在 T+1 日发起原路退款。"] == "支付失败排查手册 › 二、重复扣款"


def test_retrieval_text_puts_the_context_first():
    from kb.ingestion.chunker import retrieval_text

    assert retrieval_text("手册 › 一、超时", "正文。") == "手册 › 一、超时\n正文。"
    assert retrieval_text("", "正文。") == "正文。"


TABLE = ("## 价格\n\n| 型号 | 价格 | 保修 |\n|---|---|---|\n"
         + "".join(f"| AC-{i}00 | {i}999元 | {i}年，自购买之日起计算，滤网等耗材除外 |\n" for i in range(1, 9))
         + "\n表后的说明文字。")


def test_a_child_starting_inside_a_table_starts_with_its_header_row():
    children = [c for p in TextChunker(parent_chars=1000, child_chars=120).split(TABLE) for c in p.children]
    rows = [c for c in children if "AC-" in c.content]
    assert len(rows) >= 3
    for child in rows:
        assert child.content.startswith("| 型号 | 价格 | 保修 |\n|---|---|---|\n")
        assert child.content.count("| 型号 |") == 1
        # the offsets still locate the child's own rows, which the header only precedes
        assert child.content.endswith(TABLE[child.start:child.end])


def test_prose_after_a_table_gets_no_header():
    text = TABLE.replace("表后的说明文字。", "表后的说明文字，" * 20 + "到此为止。")
    children = [c for p in TextChunker(parent_chars=1000, child_chars=120).split(text) for c in p.children]
    prose = [c for c in children if c.content.startswith("表后") or "|" not in c.content]
    assert prose and all(text[c.start:c.end] == c.content for c in prose)


def test_an_faq_question_line_starts_the_piece_its_answer_is_in():
    # Answers of one to four sentences: pieces of about 160 characters close right after a question otherwise.
    pairs = [(f"Q: How do I reset lock {n}?", f"A: Hold the reset button of lock {n} for ten seconds."
              + " It erases every code." * (n % 4)) for n in range(12)]
    text = "\n\n".join(f"{q}\n{a}" for q, a in pairs)
    parents = TextChunker(parent_chars=600, child_chars=160).split(text)

    pieces = [child.content for parent in parents for child in parent.children] + [p.content for p in parents]
    assert len(pieces) > 10
    for piece in pieces:
        assert not piece.rstrip().endswith("?"), piece


def test_a_spreadsheet_row_is_never_split_between_pieces():
    rows = "\n".join(f"编号: FS-{n:02d}; 环节: 第{n}道工序; 控制要求: 温度保持在{n}℃以下，每班记录一次; 负责人: 厨师长"
                     for n in range(1, 30))
    parents = TextChunker(parent_chars=400, child_chars=120).split(rows, title="食品安全规范")
    pieces = [p.content for p in parents] + [c.content for p in parents for c in p.children]
    for piece in pieces:
        for line in piece.splitlines():
            assert line.startswith("编号: FS-") and line.endswith("负责人: 厨师长"), line

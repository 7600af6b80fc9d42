"""Text decoding: a stray BOM or a few bad bytes never turn a document into garbled text."""
import pytest

from kb.ingestion.parsers import ParseError, decode_text, parse_document

ZH = "知识库问答系统支持中文文档。向量检索把文本变成向量，BM25 按词频打分，两者融合效果更好。"
ZH_TRAD = "知識庫問答系統支援繁體中文文件，檢索增強生成。臺灣的資訊產業發達，許多公司使用這個系統管理文件。"
EN = "The ingestion worker parses each document, splits it into chunks and stores their vectors."


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_real_utf16_with_its_bom_is_read(encoding):
    bom = b"\xff\xfe" if encoding == "utf-16-le" else b"\xfe\xff"
    assert decode_text(bom + ZH.encode(encoding)) == ZH
    assert decode_text(bom + EN.encode(encoding)) == EN


@pytest.mark.parametrize("encoding", ["utf-8", "gb18030"])
@pytest.mark.parametrize("text", [ZH, EN, ZH + "\n" + EN], ids=["zh", "en", "mixed"])
def test_a_stray_utf16_bom_in_front_of_other_text_is_dropped(encoding, text):
    # Read as UTF-16 these bytes become CJK-looking noise; the reading behind the junk prefix wins.
    assert decode_text(b"\xff\xfe" + text.encode(encoding)) == text


def test_a_stray_utf8_bom_in_front_of_gbk_text_is_dropped():
    assert decode_text(b"\xef\xbb\xbf" + ZH.encode("gbk")) == ZH


def test_one_bad_byte_in_utf8_chinese_is_replaced_not_read_as_gbk():
    data = ZH.encode("utf-8")
    damaged = data[:9] + b"\xff" + data[9:]
    text = decode_text(damaged)
    assert text.replace("\ufffd", "") == ZH
    assert text.count("\ufffd") == 1


def test_a_bad_byte_inside_a_utf8_character_costs_only_that_character():
    data = ZH.encode("utf-8")
    text = decode_text(data[:10] + b"\xff" + data[10:])
    assert text.startswith(ZH[:3] + "\ufffd")
    assert text.rstrip().endswith(ZH[4:])


@pytest.mark.parametrize("encoding", ["utf-8", "gbk"])
def test_mostly_english_text_with_a_few_chinese_words_and_one_bad_byte_keeps_its_chinese(encoding):
    text = "Release notes: the 检索 stage now runs 并行 with the parser. Fixed a crash on empty files."
    data = text.encode(encoding)
    damaged = data[:-10] + b"\xff" + data[-10:]
    assert decode_text(damaged).replace("\ufffd", "") == text


def test_a_truncated_utf8_character_is_replaced():
    data = ZH.encode("utf-8")
    damaged = data[:7] + data[8:]  # one continuation byte lost in the middle of a character
    text = decode_text(damaged)
    assert text.count("\ufffd") == 1
    assert text[3:] == ZH[3:]


def test_one_bad_byte_in_gbk_chinese_is_replaced():
    data = ZH.encode("gbk")
    damaged = data[:12] + b"\xff" + data[12:]
    text = decode_text(damaged)
    assert text.replace("\ufffd", "") == ZH
    assert text.count("\ufffd") == 1


def test_an_odd_trailing_byte_in_utf16_is_replaced():
    text = decode_text(b"\xff\xfe" + ZH.encode("utf-16-le") + b"\x00")
    assert text.rstrip("\ufffd") == ZH


def test_traditional_chinese_in_big5_with_one_bad_byte_is_read_as_big5():
    data = ZH_TRAD.encode("big5")
    text = decode_text(data[:20] + b"\x80" + data[20:])
    assert text.replace("\ufffd", "") == ZH_TRAD


def test_text_that_reads_as_nothing_plausible_is_refused_with_a_reason():
    # Bytes that decode in GB18030 only into rare ideographs and private-use characters.
    garbage = bytes([0xAA, 0xA1, 0xFE, 0xFE, 0xAB, 0xC3] * 200)
    with pytest.raises(ParseError, match="does not read plausibly"):
        decode_text(garbage)


def test_utf16_read_of_utf8_bytes_is_never_returned_as_ready_text():
    # Odd-looking text built so that the UTF-16 reading decodes without error: the check must reject it.
    data = ZH.encode("utf-8")
    if len(data) % 2:
        data += b" "
    text = parse_document(b"\xff\xfe" + data, "txt")
    assert text.strip() == ZH

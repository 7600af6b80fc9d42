"""Language helpers: which language a text is in, and Traditional → Simplified normalisation."""
from __future__ import annotations

import pytest

from docmind.language import to_simplified


@pytest.mark.parametrize("traditional,simplified", [
    ("密碼最少幾位？", "密码最少几位？"),
    ("這個軟體的印表機驅動在哪裡下載？", "这个软件的打印机驱动在哪里下载？"),
])
def test_traditional_text_becomes_simplified_with_mainland_words(traditional, simplified):
    assert to_simplified(traditional) == simplified


@pytest.mark.parametrize("text", ["年假有几天？信息安全部的邮箱是什么？", "How long is the VPN token valid?",
                                  "E2 / 25 MB", ""])
def test_simplified_and_latin_text_is_left_as_it_is(text):
    assert to_simplified(text) == text

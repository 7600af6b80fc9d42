"""Language helpers: which language a text is in, and Traditional → Simplified normalisation."""
from __future__ import annotations

import pytest

from docmind.language import to_simplified


@pytest.mark.parametrize("traditional,simplified", [
    ("密碼最少幾位？", "密码最少几位？"),
    ("請假需要誰審批？", "请假需要谁审批？"),
])
def test_traditional_characters_become_simplified(traditional, simplified):
    assert to_simplified(traditional) == simplified


@pytest.mark.parametrize("text", ["年假有几天？信息安全部的邮箱是什么？", "戈登出生于哪里？",
                                  "2021年新增就业多少人？最佳影片？", "How long is the VPN token valid?",
                                  "E2 / 25 MB", ""])
def test_simplified_and_latin_text_is_left_as_it_is_words_included(text):
    assert to_simplified(text) == text

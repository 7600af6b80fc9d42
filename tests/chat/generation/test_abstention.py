"""The answer when the knowledge base does not answer: plain, in the question's language, related documents named."""
from __future__ import annotations

import pytest

from chat.generation.abstention import abstention


@pytest.mark.parametrize(("question", "says", "editor"), [("年假有几天？", "知识库中没有找到", "编辑者"),
                                                          ("How many days of leave?", "does not contain", "editor")])
def test_it_says_so_in_the_questions_language_and_sends_a_reader_who_cannot_upload_to_an_editor(
        question, says, editor):
    text = abstention(question=question, related_titles=["员工手册", "员工手册", ""])
    assert says in text and editor in text
    assert "上传" not in text and "upload" not in text.lower()  # most askers may not upload
    assert text.count("员工手册") == 1 and "[1]" not in text  # related once, never cited

"""The answer when the knowledge base does not answer the question: said plainly, in the question's language."""
from __future__ import annotations

from collections.abc import Sequence

from docmind.language import is_chinese

ABSTAIN_ZH = "知识库中没有找到能回答这个问题的内容。"
ABSTAIN_EN = "The knowledge base does not contain an answer to this question."
RELATED_ZH = "以下文档与问题相关，但不是答案："
RELATED_EN = "These documents are related, but do not answer it:"
# Said to every asker alike (the answer may be cached for others who read the same bases), most of whom cannot
# upload: the document that is missing is an editor's to add.
HINT_ZH = "可以换个说法再问，或请知识库的编辑者补充相关文档。"
HINT_EN = "Try rephrasing the question, or ask an editor of the knowledge base to add a document that covers it."


def abstention(*, question: str, related_titles: Sequence[str]) -> str:
    """No claim and no [n]: the closest documents are named as related, never cited as the answer."""
    zh = is_chinese(question)
    names = list(dict.fromkeys(t for t in related_titles if t))
    text = ABSTAIN_ZH if zh else ABSTAIN_EN
    if names:
        text += "\n\n" + (RELATED_ZH if zh else RELATED_EN) + "\n" + "\n".join(
            f"- 《{n}》" if zh else f"- {n}" for n in names)
    return text + "\n\n" + (HINT_ZH if zh else HINT_EN)

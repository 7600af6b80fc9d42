"""The memory extraction reply: memories with type, content and supersedes; a reply that does not fit is unusable."""
import json

import pytest

from docmind.llm.replies import parse_reply
from docmind.prompts.memory_extraction import MAX_CONTENT_CHARS, MemoryExtractionReply, user_message


def test_a_good_reply_reads_every_memory():
    reply = parse_reply(MemoryExtractionReply, json.dumps(
        {"memories": [{"type": "profile", "content": "我在深圳工作", "supersedes": [3]},
                      {"type": "preference", "content": "I prefer short answers"}]}, ensure_ascii=False))
    assert [(m.type, m.content, m.supersedes) for m in reply.memories] == [
        ("profile", "我在深圳工作", [3]), ("preference", "I prefer short answers", [])]


def test_a_reply_without_memories_is_an_empty_list():
    assert parse_reply(MemoryExtractionReply, "{}").memories == []


@pytest.mark.parametrize("memory", [{"type": "fact"}, {"type": "fact", "content": ""},
                                    {"type": "fact", "content": "长" * (MAX_CONTENT_CHARS + 1)},
                                    {"type": "fact", "content": "我在上海", "supersedes": ["abc"]}])
def test_a_memory_that_does_not_fit_makes_the_reply_unusable(memory):
    with pytest.raises(ValueError, match="extractor reply does not fit the schema"):
        parse_reply(MemoryExtractionReply, json.dumps({"memories": [memory]}), what="extractor reply")


def test_the_user_message_lists_existing_memories_as_json_and_cuts_the_message():
    text = user_message(existing=[{"id": 1, "type": "fact", "content": "我在上海"}], message=" 你好" + "长" * 3000)
    assert text.startswith('【已有记忆】\n[{"id": 1, "type": "fact", "content": "我在上海"}]\n\n【用户本轮消息】\n你好')
    assert len(text.split("【用户本轮消息】\n")[1]) == 2000

"""The document profile reply: covers and when_to_retrieve read as text, a non-list of tags refused."""
import pytest

from docmind.llm.replies import parse_reply
from docmind.prompts.domain_profile import DocumentProfileReply, user_message


def test_a_good_reply_reads_both_fields():
    reply = parse_reply(DocumentProfileReply,
                        '好的 {"covers": ["支付超时", 404], "when_to_retrieve": "用户描述支付失败时"}')
    assert reply.covers == ["支付超时", "404"] and reply.when_to_retrieve == "用户描述支付失败时"


def test_missing_or_null_fields_are_empty_so_the_caller_derives_the_profile_offline():
    assert parse_reply(DocumentProfileReply, '{"when_to_retrieve": null}') == DocumentProfileReply()


@pytest.mark.parametrize("reply", ['{"covers": "支付超时、退款"}', '{"covers": 3}', '{"covers": [', "没有 JSON"])
def test_an_unusable_reply_is_a_value_error(reply):
    with pytest.raises(ValueError, match="profile reply"):
        parse_reply(DocumentProfileReply, reply, what="profile reply")


def test_the_user_message_holds_the_title_and_the_text():
    assert user_message(title="支付手册", text="正文") == "标题：支付手册\n\n正文：\n正文"

"""The domain note reply: description and when_to_retrieve read as text; no object is an error."""
import pytest

from docmind.llm.replies import parse_reply
from docmind.prompts.domain_aggregation import DomainAggregationReply, user_message


def test_a_good_reply_reads_both_fields():
    reply = parse_reply(DomainAggregationReply,
                        '```json\n{"description": "支付", "when_to_retrieve": "问到支付时"}\n```')
    assert reply == DomainAggregationReply(description="支付", when_to_retrieve="问到支付时")


def test_missing_or_null_fields_are_empty():
    assert parse_reply(DomainAggregationReply, '{"description": null}') == DomainAggregationReply()


@pytest.mark.parametrize("reply", ['{"when_to_retrieve": }', "", "我不知道"])
def test_an_unusable_reply_is_a_value_error(reply):
    with pytest.raises(ValueError, match="domain reply"):
        parse_reply(DomainAggregationReply, reply, what="domain reply")


def test_the_user_message_has_one_line_per_document():
    text = user_message(domain_id="pay",
                        docs=[("支付手册", "问到支付时", ("支付超时", "退款")), ("账单", "问到账单时", ())])
    assert text == ("知识域：pay\n文档：\n- 《支付手册》：问到支付时（场景：支付超时、退款）\n"
                    "- 《账单》：问到账单时（场景：）")

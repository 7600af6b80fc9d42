"""The JSON object inside a model reply: fences and chatter tolerated, a missing or unfit object named clearly."""
import pytest
from pydantic import BaseModel

from docmind.llm.replies import json_object_text, parse_reply


class _Pair(BaseModel):
    a: int
    b: str = "default"


@pytest.mark.parametrize("reply", ['{"a": 1}', '```json\n{"a": 1}\n```', '好的：{"a": 1} 以上。'])
def test_it_finds_the_object_around_fences_and_chatter(reply):
    assert parse_reply(_Pair, reply) == _Pair(a=1, b="default")


@pytest.mark.parametrize("reply", [None, "", "no braces here"])
def test_a_reply_without_an_object_names_what_was_parsed(reply):
    with pytest.raises(ValueError, match="no JSON object in the classifier reply"):
        parse_reply(_Pair, reply, what="classifier reply")


@pytest.mark.parametrize("reply", ['{"a": }', '{"a": "not a number"}', '{"b": "no a"}'])
def test_broken_or_unfit_json_is_a_value_error_that_does_not_quote_the_reply(reply):
    with pytest.raises(ValueError, match=r"^domain reply does not fit the schema: \d+ error\(s\)$"):
        parse_reply(_Pair, reply, what="domain reply")


def test_the_raw_object_text_is_left_to_the_caller():
    assert json_object_text('x {"a": } y') == '{"a": }'

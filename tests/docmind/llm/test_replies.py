"""The JSON object inside a model reply: fences and chatter tolerated, a missing object named clearly."""
import pytest

from docmind.llm.replies import json_object_from_reply, json_object_text


@pytest.mark.parametrize("reply", ['{"a": 1}', '```json\n{"a": 1}\n```', '好的：{"a": 1} 以上。'])
def test_it_finds_the_object_around_fences_and_chatter(reply):
    assert json_object_from_reply(reply) == {"a": 1}


@pytest.mark.parametrize("reply", [None, "", "no braces here"])
def test_a_reply_without_an_object_names_what_was_parsed(reply):
    with pytest.raises(ValueError, match="no JSON object in the classifier reply"):
        json_object_from_reply(reply, what="classifier reply")


def test_broken_json_is_a_value_error_and_the_raw_text_is_left_to_the_caller():
    with pytest.raises(ValueError):
        json_object_from_reply('{"a": }')
    assert json_object_text('x {"a": }') == '{"a": }'

"""The response_format built from a pydantic reply schema: strict when strict mode can express the schema."""
from __future__ import annotations

from pydantic import BaseModel, Field

from docmind.llm.structured import response_format_for
from docmind.prompts.classifier import ClassifierReply
from docmind.prompts.memory_extraction import MemoryExtractionReply


class _Inner(BaseModel):
    name: str
    default: str = "a property may be called default"


class _Nested(BaseModel):
    items: list[_Inner] = []
    note: str | None = None


class _Open(BaseModel):
    scores: dict[str, float] = {}


def test_a_closed_schema_is_strict_with_every_field_required_and_no_defaults():
    spec = response_format_for(_Nested)
    assert spec["type"] == "json_schema" and spec["json_schema"]["name"] == "_Nested"
    assert spec["json_schema"]["strict"] is True
    schema = spec["json_schema"]["schema"]
    assert schema["additionalProperties"] is False and schema["required"] == ["items", "note"]
    inner = schema["$defs"]["_Inner"]
    assert inner["additionalProperties"] is False and inner["required"] == ["name", "default"]
    assert "default" not in schema["properties"]["items"] and "default" not in inner["properties"]["default"]
    assert "default" in inner["properties"]  # the property of that name stays: only the keyword goes


def test_the_classifier_reply_is_strict_under_its_wire_names():
    spec = response_format_for(ClassifierReply)
    assert spec["json_schema"]["strict"] is True
    assert {"timeAware", "scopeConfidence", "memoryWriteHints"} <= set(spec["json_schema"]["schema"]["required"])


def test_length_limits_make_the_schema_non_strict_and_keep_it_as_pydantic_states_it():
    spec = response_format_for(MemoryExtractionReply)
    assert spec["json_schema"]["strict"] is False
    assert spec["json_schema"]["schema"] == MemoryExtractionReply.model_json_schema()


def test_an_open_mapping_makes_the_schema_non_strict():
    assert response_format_for(_Open)["json_schema"]["strict"] is False


def test_an_open_mapping_inside_a_list_is_found_too():
    class Rows(BaseModel):
        rows: list[dict[str, int]]

    assert response_format_for(Rows)["json_schema"]["strict"] is False


def test_item_count_limits_stay_strict():
    class Tags(BaseModel):
        tags: list[str] = Field(default_factory=list, max_length=3)

    spec = response_format_for(Tags)["json_schema"]
    assert spec["strict"] is True and spec["schema"]["properties"]["tags"]["maxItems"] == 3

"""Ids given to the API: the range a 64-bit primary key holds, in bodies and in query strings; the moments a
query string names; text that must say something."""
from datetime import UTC, datetime

import pytest
from django.core.validators import RegexValidator
from rest_framework import serializers

from docmind.fields import MAX_ID, NOT_BLANK_TEXT, IdField, NotBlankTextField, query_id, query_moment


@pytest.mark.parametrize("raw,expected", [("1", 1), (str(MAX_ID), MAX_ID), ("0", None), ("-3", None),
                                          (str(MAX_ID + 1), None), ("²", None), ("", None), ("1.0", None)])
def test_a_query_string_names_an_id_only_from_1_to_the_largest_key(raw, expected):
    assert query_id(raw) == expected


@pytest.mark.parametrize("raw,expected", [
    ("2026-03-01", datetime(2026, 3, 1, tzinfo=UTC)),
    ("2026-03-01T08:30:00", datetime(2026, 3, 1, 8, 30, tzinfo=UTC)),
    ("2026-03-01T08:30:00+08:00", datetime(2026, 3, 1, 0, 30, tzinfo=UTC)),
])
def test_a_query_string_names_a_moment_by_date_or_date_time(settings, raw, expected):
    settings.TIME_ZONE = "UTC"  # a moment without a zone is in the current one
    assert query_moment(raw, "since") == expected


@pytest.mark.parametrize("raw", ["yesterday", "", "2026-02-30", "2026-03-01T25:00", "2026-03-01T08:00+25:00"])
def test_a_moment_that_names_no_moment_is_a_validation_error_keyed_by_the_filter(raw):
    # Django's parsers raise ValueError for a well-formed impossible one: it must not become a 500.
    with pytest.raises(serializers.ValidationError) as refused:
        query_moment(raw, "until")
    assert list(refused.value.detail) == ["until"]


def test_a_not_blank_text_refuses_blank_text_and_says_so_in_its_pattern():
    field = NotBlankTextField(max_length=20)

    assert field.run_validation(" a\nb ") == "a\nb"
    for refused in (" \n\t", "x\x00"):
        with pytest.raises(serializers.ValidationError):
            field.run_validation(refused)
    # drf-spectacular publishes a RegexValidator as the schema's `pattern`.
    assert NOT_BLANK_TEXT in [v.regex.pattern for v in field.validators if isinstance(v, RegexValidator)]


def test_an_id_past_the_largest_key_is_a_validation_error_not_a_database_one():
    field = IdField()

    assert field.run_validation(MAX_ID) == MAX_ID
    with pytest.raises(serializers.ValidationError):
        field.run_validation(MAX_ID + 1)
    with pytest.raises(serializers.ValidationError):
        field.run_validation(0)


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/reviews/?kb={}", "/api/eval/sets/?kb={}", "/api/eval/runs/?set={}"])
def test_a_huge_or_zero_id_in_a_query_string_is_a_400(editor_client, path):
    for value in (MAX_ID + 1, 0):
        response = editor_client.get(path.format(value))

        assert response.status_code == 400, (path, value, response.content)


@pytest.mark.django_db
def test_an_empty_template_type_is_refused_as_no_type_of_the_list(editor_client):
    assert editor_client.get("/api/eval/sets/template/?type=").status_code == 400
    assert editor_client.get("/api/eval/sets/template/").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/kb/documents/?kb=²", "/api/kb/qa-pairs/?kb=²"])
def test_a_digit_that_is_not_ascii_names_no_base(editor_client, path):
    assert editor_client.get(path).status_code == 404

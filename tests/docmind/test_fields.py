"""Ids given to the API: the range a 64-bit primary key holds, in bodies and in query strings."""
import pytest
from rest_framework import serializers

from docmind.fields import MAX_ID, IdField, query_id


@pytest.mark.parametrize("raw,expected", [("1", 1), (str(MAX_ID), MAX_ID), ("0", None), ("-3", None),
                                          (str(MAX_ID + 1), None), ("²", None), ("", None), ("1.0", None)])
def test_a_query_string_names_an_id_only_from_1_to_the_largest_key(raw, expected):
    assert query_id(raw) == expected


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

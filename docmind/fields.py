"""Serializer fields for names and free text that people type (what the API stores is what they can read back),
and the readers of the ids and moments a query string names."""
from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Any

from django.core.validators import RegexValidator
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.timezone import is_naive, make_aware
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.utils import html

# Line breaks and tabs belong in longer text; no other control character (nor a lone surrogate, which no
# database encoding can store) does.
_TEXT_WHITESPACE = frozenset("\t\n\r")
# The same rules as patterns, so that the OpenAPI schema states them (drf-spectacular publishes a
# RegexValidator as `pattern`); the character check below stays the authority and names the character.
_CONTROL = r"\x00-\x1f\x7f-\x9f"
# Blank-allowing fields get `+`: drf-spectacular offers the empty string as an alternative of its own.
_LINE_PATTERN = rf"^[^{_CONTROL}]+$"
_NAME_PATTERN = rf"^[^{_CONTROL}]*[^\s{_CONTROL}][^{_CONTROL}]*$"  # and not blank
_TEXT_PATTERN = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]+$"
# Text with at least one character that is not a space (what a service keeps after stripping), no control
# characters but tabs and line breaks: the schema says what a blank text would be refused for.
_TEXT_CONTROL = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
NOT_BLANK_TEXT = rf"^[^{_TEXT_CONTROL}]*[^\s{_TEXT_CONTROL}][^{_TEXT_CONTROL}]*$"


def _bad_character(value: str, allowed: frozenset[str]) -> str | None:
    for char in value:
        if char not in allowed and unicodedata.category(char) in ("Cc", "Cs"):
            return char
    return None


class StrictCharField(serializers.CharField):
    """A CharField that takes text only: DRF's would store the JSON number 0 as "0"."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A BooleanField that takes JSON true and false only: DRF's reads "yes", "0" or 1 as booleans, which a
    client's typo should not silently become."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class _CheckedCharField(StrictCharField):
    allowed: frozenset[str] = frozenset()
    pattern = ""
    default_error_messages = {"control_character": _("Control characters (here U+{code}) are not allowed.")}

    def __init__(self, *, pattern: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pattern = pattern or self.pattern
        if self.pattern:
            self.validators.append(RegexValidator(self.pattern))

    def get_value(self, dictionary: Any) -> Any:
        # A form field sent empty is a value to validate, not an absent one: DRF would otherwise skip an
        # optional `name=""` and answer 200 with nothing changed.
        if html.is_html_input(dictionary) and dictionary.get(self.field_name) == "":
            return ""
        return super().get_value(dictionary)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        bad = _bad_character(value, self.allowed)
        if bad is not None:
            self.fail("control_character", code=f"{ord(bad):04X}")
        return value


class NameField(_CheckedCharField):
    """A one-line name or title: no control characters at all, never blank."""

    def __init__(self, **kwargs: Any) -> None:
        self.pattern = _LINE_PATTERN if kwargs.get("allow_blank") else _NAME_PATTERN
        super().__init__(**kwargs)  # a `pattern` argument narrows it further (the field's own format)


class TextField(_CheckedCharField):
    """Longer text: tabs and line breaks allowed, other control characters not."""

    allowed = _TEXT_WHITESPACE
    pattern = _TEXT_PATTERN


class NotBlankTextField(TextField):
    """Longer text that must say something: the schema states that a blank one is refused (NOT_BLANK_TEXT), as
    the service that strips it would refuse it."""

    pattern = NOT_BLANK_TEXT


# The largest row id a 64-bit primary key holds (SQLite's INTEGER, MariaDB's BIGINT): a larger number names no
# row, and the database driver would fail on it instead of finding nothing.
MAX_ID = 2**63 - 1


class IdField(serializers.IntegerField):
    """The id of a row: 1 to MAX_ID, so that the schema states the range and a larger number is a 400."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(min_value=1, max_value=MAX_ID, **kwargs)


# How the schema states an id given in a query string (a path id is a route converter's).
ID_SCHEMA = {"type": "integer", "minimum": 1, "maximum": MAX_ID}


def query_id(raw: str) -> int | None:
    """The row id a query string names, or None when it names none (not ASCII digits, 0, or past MAX_ID)."""
    if not (raw.isascii() and raw.isdigit()):
        return None
    value = int(raw)
    return value if 1 <= value <= MAX_ID else None


def query_moment(raw: str, name: str) -> datetime:
    """The moment a query-string filter `name` names: an ISO 8601 date-time, or a date meaning its midnight; one
    without a zone is in the current time zone. ValidationError (400, keyed `name`) for anything else, a
    well-formed but impossible one included (February 30th, hour 25), which Django's parsers raise ValueError for."""
    try:
        value = parse_datetime(raw) or (datetime.combine(d, datetime.min.time()) if (d := parse_date(raw)) else None)
    except ValueError:
        value = None
    if value is None:
        raise ValidationError({name: ["a date (YYYY-MM-DD) or date-time (ISO 8601)"]})
    return make_aware(value) if is_naive(value) else value

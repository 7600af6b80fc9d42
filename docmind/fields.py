"""Serializer fields for names and free text that people type: what the API stores is what they can read back."""
from __future__ import annotations

import unicodedata
from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers
from rest_framework.utils import html

# Line breaks and tabs belong in longer text; no other control character (nor a lone surrogate, which no
# database encoding can store) does.
_TEXT_WHITESPACE = frozenset("\t\n\r")


def _bad_character(value: str, allowed: frozenset[str]) -> str | None:
    for char in value:
        if char not in allowed and unicodedata.category(char) in ("Cc", "Cs"):
            return char
    return None


class _CheckedCharField(serializers.CharField):
    allowed: frozenset[str] = frozenset()
    default_error_messages = {"control_character": _("Control characters (here U+{code}) are not allowed.")}

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


class TextField(_CheckedCharField):
    """Longer text: tabs and line breaks allowed, other control characters not."""

    allowed = _TEXT_WHITESPACE

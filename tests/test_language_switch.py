"""The language switch names each language in itself, so a reader who cannot read the page finds their own."""
from __future__ import annotations

import re

import pytest
from django.test import Client


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["zh-hans", "en"])
def test_each_language_is_named_in_itself_whatever_the_pages_language(language):
    html = Client().get("/login/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    options = dict(re.findall(r'<option value="([^"]+)"[^>]*>([^<]+)</option>', html))
    assert options == {"zh-hans": "简体中文", "en": "English"}

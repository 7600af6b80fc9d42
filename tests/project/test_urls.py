"""Project URLs that no app owns: the favicon browsers ask for on every page."""
from __future__ import annotations

import pytest
from django.contrib.staticfiles import finders


def test_favicon_ico_redirects_to_a_shipped_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/docmind/favicon.ico"
    assert finders.find("docmind/favicon.ico") and finders.find("docmind/favicon.svg")


@pytest.mark.django_db
def test_pages_name_the_svg_icon(client):
    html = client.get("/login/").content.decode()
    assert '<link rel="icon" href="/static/docmind/favicon.svg" type="image/svg+xml">' in html

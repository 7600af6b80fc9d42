"""The chat page: login required, renders the shell with the user's conversations and documents."""
from __future__ import annotations

import pytest

from chat import services

pytestmark = pytest.mark.django_db


def test_anonymous_is_sent_to_login(client):
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_the_page_lists_only_the_users_conversations(client, member, other_member):
    services.conversation_start(user=member, question="<script>alert(1)</script>我的问题")
    services.conversation_start(user=other_member, question="别人的问题")
    client.force_login(member)
    html = client.get("/").content.decode()
    assert "我的问题" in html and "别人的问题" not in html
    assert "<script>alert(1)</script>" not in html  # titles are escaped by the template
    assert "docmind/chat.js" in html and 'id="doc-picker"' in html

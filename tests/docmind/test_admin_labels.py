"""The admin index names every model properly in both languages (no "User memorys", no English left in Chinese)."""
from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("accept", "present", "absent"), [
    ("en", ["User memories", "Conversations", "Messages", "Feedback", "External MCP servers", "Documents"],
     ["memorys", "Memorys", "Message feedbacks"]),
    ("zh-CN", ["用户记忆", "长期记忆", "对话", "消息", "反馈", "外部 MCP 服务", "文档", "知识领域", "AI 配置"],
     ["User memor", "Long-term memory", "Conversations", "Message feedback", "External MCP", "Knowledge domains"]),
])
def test_the_admin_index_names_each_model_in_the_users_language(admin_user, accept, present, absent):
    client = Client()
    client.force_login(admin_user)
    html = client.get("/admin/", HTTP_ACCEPT_LANGUAGE=accept).content.decode()
    for label in present:
        assert label in html, label
    for label in absent:
        assert label not in html, label

"""Admin labels are translatable English source strings, and the admin index names every model in both languages."""
import pytest
from django.contrib import admin
from django.test import Client
from django.utils.functional import Promise

from chat.models import Conversation, Message, MessageFeedback
from config_admin.models import SysAiConfig, SysAiConfigChange
from docmind.models import McpServer
from kb.models import Chunk, ChunkLevel, Document, DocumentStatus, KnowledgeDomain
from memory.models import UserMemory

MODELS = [Document, Chunk, KnowledgeDomain, SysAiConfig, SysAiConfigChange, Conversation, Message, MessageFeedback,
          UserMemory, McpServer]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_model_and_field_names_are_marked_for_translation(model):
    meta = model._meta
    assert isinstance(meta.verbose_name, Promise) and isinstance(meta.verbose_name_plural, Promise)
    assert isinstance(meta.app_config.verbose_name, Promise)
    unmarked = [f.name for f in meta.concrete_fields if f.name != "id" and not isinstance(f.verbose_name, Promise)]
    assert unmarked == []


def test_status_and_level_labels_are_marked_for_translation():
    assert all(isinstance(label, Promise) for _, label in DocumentStatus.choices + ChunkLevel.choices)


@pytest.mark.parametrize("model", [Document, Chunk, KnowledgeDomain, SysAiConfig], ids=lambda m: m.__name__)
def test_admin_actions_and_columns_are_marked_for_translation(model):
    model_admin = admin.site._registry[model]
    for name in model_admin.actions or ():
        assert isinstance(getattr(model_admin, name).short_description, Promise), name
    for name in model_admin.list_display:
        attribute = getattr(model_admin, name, None)
        if callable(attribute):
            assert isinstance(attribute.short_description, Promise), name


def test_the_admin_site_header_is_marked_for_translation():
    assert isinstance(admin.site.site_header, Promise)


@pytest.mark.django_db
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

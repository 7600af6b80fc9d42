"""The Chinese UI has no English left in it: the main pages and every admin page, rendered in zh-hans, are
searched for English words outside code, identifiers, names and data the test itself put there."""
from __future__ import annotations

import re

import lxml.html
import pytest
from django.contrib import admin
from django.test import Client, RequestFactory

pytestmark = pytest.mark.django_db(transaction=True)

# Not prose: code, scripts, values in inputs, the password hash summary's values (Django writes its random salt in
# a <bdi>, and a salt of letters reads as a word), and Django's own admin icons (whose alt texts Django does not
# translate).
SKIPPED_TAGS = {"script", "style", "template", "code", "pre", "kbd", "textarea", "bdi"}
SHOWN_ATTRIBUTES = ("title", "placeholder", "aria-label", "alt")
# A run of Latin words, not part of an identifier, a path, a quoted JSON key or a placeholder such as <name>;
# a word in it counts as English when it has three letters or more and a lowercase one.
PHRASE = re.compile(r"(?<![\w./@:<_\"-])[A-Za-z][A-Za-z'’-]*(?:[ ][A-Za-z][A-Za-z'’-]*)*(?![\w./@:(>_\"-])")
WORD = re.compile(r"[A-Za-z]+(?:['’-][A-Za-z]+)*")
# Names, product terms and keys the Chinese text keeps as they are.
KEPT = {
    "DocMind", "Doc", "Mind", "Enter", "Shift", "Control", "Command", "Mac", "Milvus", "Lite", "Streamable HTTP",
    "Token", "User Agent", "HTTP Accept", "Authorization", "stdio", "int", "float", "bool", "str", "json", "true",
    "false", "MiB", "accessCount", "executeCode",
    "Swagger", "OpenAPI", "Python", "Prometheus", "OpenMetrics", "Jaccard",
    "Bigram Jaccard", "BM25", "HyDE", "CRAG", "MMR", "RRF", "qwen-plus", "qwen-flash", "qwen-turbo", "https",
    # django-axes builds this row title in code, outside any catalogue.
    "Access Log for",
}
# Apps that arrived with English-only admin pages and are still to be translated: listed here so that the gap
# is visible, and removed from this set as each is translated.
NOT_YET_TRANSLATED = {"audit", "django_tasks_database"}
KEPT_PHRASES = sorted((k for k in KEPT if " " in k), key=len, reverse=True)


def english_in(html: str, data: set[str]) -> list[str]:
    found = []
    for text in _shown_texts(lxml.html.fromstring(html)):
        for kept in KEPT_PHRASES:
            text = text.replace(kept, " ")
        for phrase in PHRASE.findall(text):
            if phrase in KEPT or phrase in data:
                continue
            words = [w for w in WORD.findall(phrase) if len(re.sub(r"[^A-Za-z]", "", w)) >= 3
                     and w != w.upper() and w not in KEPT and w not in data]
            if words:
                found.append(phrase)
    return found


def _foreign(node) -> bool:
    """Marked as written in another language than Chinese (`lang="en"`): the language switch names English in
    English, so that a reader of English finds it."""
    language = node.get("lang") or ""
    return bool(language) and not language.lower().startswith("zh")


def _shown_texts(root):
    for node in root.iter():
        if not isinstance(node.tag, str) or node.tag in SKIPPED_TAGS or _foreign(node):
            continue
        if any(a.tag in SKIPPED_TAGS or a.tag != "html" and _foreign(a) for a in node.iterancestors()):
            continue
        if node.text:
            yield node.text
        for child in node:
            if child.tail:
                yield child.tail
        for name in SHOWN_ATTRIBUTES:
            if node.get(name) and not (node.tag == "img" and "/static/admin/" in (node.get("src") or "")):
                yield node.get(name)
        if node.tag == "input" and node.get("type") in ("submit", "button") and node.get("value"):
            yield node.get("value")


@pytest.fixture
def pages(admin_user, member, kb_editor) -> tuple[Client, list[str], set[str]]:
    """A signed-in administrator's client, the paths to check, and the data words the fixture wrote."""
    from chat import services as chat_services
    from config_admin.registry import KEYS
    from kb import services as kb_services
    from kb.ingestion.worker import process_pending_documents
    from kb.models import KnowledgeBase

    kb = kb_services.kb_create(name="员工手册库", owner=kb_editor)
    document, _ = kb_services.document_ingest_text(title="员工手册", text="# 年假\n\n年假为每年十五天。", kb=kb,
                                                   user=kb_editor, domain="人事")
    process_pending_documents()
    conversation = chat_services.conversation_start(user=admin_user, question="年假有几天？")
    chat_services.message_add_question(conversation=conversation, content="年假有几天？")
    chat_services.message_add_answer(conversation=conversation, content="十五天 [1]。")
    paths = ["/", "/memories/", f"/documents/{document.pk}/", "/admin/", "/admin/password_change/",
             "/admin/chat/usage/"]
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label in NOT_YET_TRANSLATED:
            continue
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        paths += [base, base + "add/"] if model_admin.has_add_permission(request) else [base]
        row = model._default_manager.order_by("pk").first()
        if row is not None:
            paths.append(f"{base}{row.pk}/change/")
    data = {user.username for user in (admin_user, member, kb_editor)} | {"root", "admin", "member", "editor", "kb"}
    data |= {name for name in KnowledgeBase.objects.values_list("name", flat=True)}
    data |= {key.category for key in KEYS} | {choice for key in KEYS for choice in key.choices or ()}
    data |= {"Audit log"}  # the audit app's name in the permission list (NOT_YET_TRANSLATED)
    data |= {"Default", "general", "txt", "md", "pdf", "docx", "xlsx", "csv", "pptx", "html", "htm", "png", "jpg",
             "jpeg", "unknown"}
    client = Client()
    client.force_login(admin_user)
    client.cookies["django_language"] = "zh-hans"
    return client, paths, data


def test_no_page_of_the_chinese_ui_shows_english(pages):
    client, paths, data = pages
    problems = {}
    for path in paths:
        response = client.get(path)
        if response.status_code != 200 or "text/html" not in response["Content-Type"]:
            continue  # an admin without add permission (keys are code, usage rows are the turns')
        found = english_in(response.content.decode(), data)
        if found:
            problems[path] = sorted(set(found))
    assert problems == {}, "\n".join(f"{path}: {found}" for path, found in problems.items())


def test_the_signed_out_pages_are_in_chinese():
    client = Client()
    client.cookies["django_language"] = "zh-hans"
    for path in ("/login/", "/admin/login/"):
        assert english_in(client.get(path).content.decode(), set()) == []


@pytest.mark.parametrize("html, english", [
    ("<p>请选择 - Select an option -</p>", ["Select an option"]),
    ("<p title='Open the sidebar'>打开</p>", ["Open the sidebar"]),
    ("<p>上传 PDF 或 DOCX 文件，见 chat.max_message_chars</p>", []),
    ("<p>由 DocMind 回答</p><code>print('hello world')</code>", []),
    ("<p><strong>盐值</strong>: <bdi>dcdcad**********</bdi></p>", []),
    ('<select><option lang="zh-hans">简体中文</option><option lang="en">English</option></select>', []),
    ('<p lang="zh-hans">请在设置页面 set the language</p>', ["set the language"]),
])
def test_the_check_finds_english_prose_and_passes_names_and_code(html, english):
    assert english_in(html, set()) == english


def test_every_string_the_scripts_translate_has_a_chinese_translation():
    from pathlib import Path

    import polib

    root = Path(__file__).resolve().parents[1]
    catalogue = polib.pofile(str(root / "locale/zh_Hans/LC_MESSAGES/djangojs.po"))
    translated = {entry.msgid for entry in catalogue
                  if (entry.msgstr or any(entry.msgstr_plural.values())) and not entry.obsolete}
    missing = {}
    for script in sorted((root / "static/docmind").glob("*.js")):
        wanted = re.findall(r"\b(?:_|gettext|ngettext)\(\s*\"((?:[^\"\\\\]|\\\\.)*)\"", script.read_text())
        if absent := [text for text in wanted if text not in translated]:
            missing[script.name] = absent
    assert missing == {}

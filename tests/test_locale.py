"""Both languages: committed catalogues match their sources, and pages follow the browser's or the chosen language."""
from __future__ import annotations

import json
import re
from pathlib import Path

import polib
import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[1]
CATALOGUES = sorted((ROOT / "locale").glob("*/LC_MESSAGES/*.po"))
CJK = re.compile(r"[\u4e00-\u9fff]")


def _translations(entries) -> dict[tuple[str, str], str]:
    return {(e.msgctxt or "", e.msgid): e.msgstr for e in entries if e.msgid and e.msgstr and not e.obsolete}


def test_there_are_catalogues_to_check():
    assert {p.stem for p in CATALOGUES} >= {"django", "djangojs"}


@pytest.mark.parametrize("po_path", CATALOGUES, ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_every_message_is_translated_and_the_committed_mo_matches_its_po(po_path):
    po = polib.pofile(str(po_path))
    untranslated = [e.msgid for e in po.untranslated_entries()] + [e.msgid for e in po.fuzzy_entries()]
    assert untranslated == []
    # The .mo is committed so that running DocMind needs no gettext tools: it must be the .po compiled.
    mo = polib.mofile(str(po_path.with_suffix(".mo")))
    assert _translations(mo) == _translations(po)


def test_no_chinese_is_left_in_the_chat_scripts_outside_the_catalogue():
    for script in ("chat.js", "chat-markdown.js", "lang.js", "memories.js"):
        text = (ROOT / "static" / "docmind" / script).read_text()
        assert not CJK.search(text), script


@pytest.mark.django_db
@pytest.mark.parametrize("accept, expected, other", [
    ("en-US,en;q=0.9", "Sign in", "登录"),
    ("zh-CN,zh;q=0.9", "登录", "Sign in"),
])
def test_the_sign_in_page_follows_the_browsers_language(accept, expected, other):
    html = Client().get("/login/", HTTP_ACCEPT_LANGUAGE=accept).content.decode()
    assert f">{expected}</button>" in html
    assert f">{other}</button>" not in html


@pytest.mark.django_db
def test_a_chosen_language_wins_over_the_browsers(member):
    client = Client()
    client.force_login(member)
    response = client.post("/i18n/setlang/", {"language": "en", "next": "/"}, HTTP_ACCEPT_LANGUAGE="zh-CN")
    assert response.status_code == 302
    page = client.get("/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert '<html lang="en">' in page and "New chat" in page and "新对话" not in page
    copy_zh = json.dumps("复制")[1:-1]  # the catalogue is JSON with ASCII escapes
    catalogue = client.get("/jsi18n/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert copy_zh not in catalogue  # English: the script's own strings are used as they are
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"})
    assert copy_zh in client.get("/jsi18n/").content.decode()


@pytest.mark.django_db
def test_the_login_lockout_pages_of_the_admin_are_in_chinese_for_a_chinese_browser(admin_user):
    from axes.models import AccessAttempt

    AccessAttempt.objects.create(username="someone", ip_address="10.0.0.9", user_agent="curl", http_accept="*/*",
                                 path_info="/login/", get_data="", post_data="", failures_since_start=3)
    client = Client()
    client.force_login(admin_user)
    page = client.get("/admin/axes/accessattempt/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "登录尝试" in page and "失败登录次数" in page
    assert "access attempts" not in page.lower()


# API errors are in the caller's language: a knowledge-base id the caller cannot read, on the chat, the document and
# knowledge-base APIs and the evaluation API, and an evaluation run that does not exist.
_MISSING = 987654


@pytest.mark.django_db
@pytest.mark.parametrize(("accept", "base", "run"), [
    ("zh-CN,zh;q=0.9", "找不到这个知识库。", "找不到这次评测运行。"),
    ("en-US,en;q=0.9", "No such knowledge base.", "No such evaluation run."),
])
def test_api_errors_follow_the_callers_language(admin_user, accept, base, run):
    from rest_framework.test import APIClient

    client = APIClient(HTTP_ACCEPT_LANGUAGE=accept)
    client.force_authenticate(user=admin_user)
    chat = client.post("/api/chat/", {"message": "你好", "kb": [_MISSING]}, format="json")
    documents = client.get(f"/api/kb/documents/?kb={_MISSING}")
    retrieve = client.post("/api/kb/retrieve/", {"query": "年假", "kb": [_MISSING]}, format="json")
    kb = client.get(f"/api/kbs/{_MISSING}/")
    evaluation = client.get(f"/api/eval/runs/{_MISSING}/")
    for response, message in ((chat, base), (documents, base), (retrieve, base), (kb, base), (evaluation, run)):
        assert response.status_code == 404 and response.json()["error"] == message, response.content


# Every literal message given to gettext in these apps is in the Chinese catalogue: one that is missing is shown in
# English on a Chinese page or API answer, and no test of a page may happen to reach it.
_GETTEXT_CALL = re.compile(r"""\b(?:_|gettext|gettext_lazy|N_)\(\s*"((?:[^"\\]|\\.)+)"\s*[),%]""")


@pytest.mark.parametrize("app", ["kb", "evals", "chat", "apikeys"])
def test_every_gettext_message_of_the_api_apps_is_in_the_catalogue(app):
    po = polib.pofile(str(ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"))
    known = {e.msgid for e in po if e.msgstr or e.msgstr_plural}
    missing = sorted({m.encode().decode("unicode_escape") if "\\" in m else m
                      for path in (ROOT / app).rglob("*.py") if "migrations" not in path.parts
                      for m in _GETTEXT_CALL.findall(path.read_text())} - known)
    assert missing == []

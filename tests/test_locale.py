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

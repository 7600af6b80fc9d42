"""The "我的记忆" page is served to signed-in users and linked from the chat page."""
import pytest

pytestmark = pytest.mark.django_db


def test_the_memories_page_needs_a_sign_in(client):
    response = client.get("/memories/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_the_memories_page_renders_its_shell_and_the_chat_links_to_it(client, member):
    client.force_login(member)
    page = client.get("/memories/").content.decode()
    assert "我的记忆" in page and "memories.js" in page and 'id="mem-rows"' in page
    assert 'href="/memories/"' in client.get("/").content.decode()


def test_the_memories_page_follows_the_language(client, member):
    client.force_login(member)
    english = client.get("/memories/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "<h1>My memories</h1>" in english and "Forget all" in english
    chinese = client.get("/memories/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "<h1>我的记忆</h1>" in chinese and "全部忘掉" in chinese

"""An administrator-registered MCP server gets no server secret, no internal address and no shell unless the
operator's environment says so; every registration is logged with who and what."""
from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from chat.agentic.external import external_tools, forget_listings
from docmind.mcp.client import McpCallFailed, McpConnector, RemoteServer
from tests.fakes.mcp_server import HttpServerThread

SCRIPT = Path(__file__).resolve().parents[2] / "fakes" / "mcp_server.py"


@pytest.fixture(scope="module")
def external():
    server = HttpServerThread().start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _fresh_listings():
    forget_listings()
    yield
    forget_listings()


def _row(**fields):
    from docmind.models import McpServer

    return McpServer(**{"name": "ext", "url": "https://tools.example.com/mcp", **fields})


@pytest.mark.parametrize(("fields", "bad"), [
    ({"header_env": {"Authorization": "OPENAI_API_KEY"}}, "header_env"),
    ({"header_env": {"X-Pass": "DOCMIND_ADMIN_PASSWORD"}}, "header_env"),
    ({"transport": "stdio", "url": "", "command": "/bin/sh", "env_names": ["DJANGO_SECRET_KEY"]}, "env_names"),
    ({"url": "http://127.0.0.1:8000/mcp"}, "url"),
    ({"url": "http://localhost/mcp"}, "url"),
    ({"url": "http://169.254.169.254/latest/meta-data"}, "url"),
    ({"url": "http://10.1.2.3/mcp"}, "url"),
    ({"url": "http://[::1]/mcp"}, "url"),
    ({"url": "http://[::ffff:127.0.0.1]/mcp"}, "url"),
    ({"transport": "stdio", "url": "", "command": "/bin/sh"}, "transport"),
])
def test_a_registration_reaching_secrets_internal_addresses_or_a_shell_is_refused(settings, fields, bad):
    settings.MCP_STDIO_ENABLED = bad == "env_names"
    with pytest.raises(ValidationError) as raised:
        _row(**fields).clean()
    assert bad in raised.value.message_dict


def test_named_secrets_of_the_documented_prefix_are_accepted(settings):
    _row(header_env={"Authorization": "DOCMIND_MCP_SECRET_TOOLS"}).clean()
    settings.MCP_STDIO_ENABLED = True
    _row(transport="stdio", url="", command="/usr/bin/tool", env_names=["DOCMIND_MCP_SECRET_TOOLS"]).clean()


def test_the_operator_may_allow_private_urls(settings):
    settings.MCP_ALLOW_PRIVATE_URLS = True
    _row(url="http://10.1.2.3/mcp").clean()


def test_a_call_never_sends_a_variable_outside_the_prefix(external, settings, monkeypatch):
    settings.MCP_ALLOW_PRIVATE_URLS = True
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leave")
    server = RemoteServer(name="ext", transport="http", url=external.url,
                          header_env={"Authorization": "OPENAI_API_KEY"}, allowed_tools=("whoami",))
    with pytest.raises(McpCallFailed, match="DOCMIND_MCP_SECRET_"):
        McpConnector(server).call_tool("whoami", {})
    specs, notes = external_tools([server])
    assert specs == [] and "refused" in notes[0]


def test_a_call_to_a_loopback_url_is_refused_unless_the_operator_allows_it(external, settings):
    server = RemoteServer(name="ext", transport="http", url=external.url, allowed_tools=("whoami",))
    settings.MCP_ALLOW_PRIVATE_URLS = False
    with pytest.raises(McpCallFailed, match="DOCMIND_MCP_ALLOW_PRIVATE_URLS"):
        McpConnector(server).list_tools()
    settings.MCP_ALLOW_PRIVATE_URLS = True
    assert "whoami" in {t.name for t in McpConnector(server).list_tools()}


def test_a_host_name_resolving_to_loopback_is_refused(settings):
    settings.MCP_ALLOW_PRIVATE_URLS = False
    server = RemoteServer(name="ext", transport="http", url="http://localhost:9/mcp", allowed_tools=("x",))
    with pytest.raises(McpCallFailed, match="loopback"):
        McpConnector(server).list_tools()


def _stdio(**kw) -> RemoteServer:
    return RemoteServer(name="local", transport="stdio", command=sys.executable, args=(str(SCRIPT),),
                        allowed_tools=("environment",), timeout_seconds=30, **kw)


def test_a_stdio_server_is_not_started_unless_the_operator_enables_stdio(settings):
    settings.MCP_STDIO_ENABLED = False
    with pytest.raises(McpCallFailed, match="DOCMIND_MCP_STDIO"):
        McpConnector(_stdio()).list_tools()


def test_a_stdio_server_runs_without_the_services_secrets(settings, monkeypatch):
    settings.MCP_STDIO_ENABLED = True
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leave")
    monkeypatch.setenv("DOCMIND_ADMIN_PASSWORD", "hunter2")
    monkeypatch.setenv("DOCMIND_MCP_SECRET_TOOLS", "given")
    names = McpConnector(_stdio(env_names=("DOCMIND_MCP_SECRET_TOOLS",))).call_tool("environment", {}).text.split()
    assert "DOCMIND_MCP_SECRET_TOOLS" in names
    assert "OPENAI_API_KEY" not in names and "DOCMIND_ADMIN_PASSWORD" not in names


@pytest.mark.django_db
def test_a_registration_in_the_admin_is_logged_with_who_and_what(admin_client, admin_user, caplog):
    from django.contrib.admin.models import LogEntry

    with caplog.at_level(logging.WARNING, logger="docmind.audit"):
        response = admin_client.post("/admin/docmind/mcpserver/add/", {
            "name": "tools", "transport": "http", "url": "https://tools.example.com/mcp",
            "header_env": '{"Authorization": "DOCMIND_MCP_SECRET_TOOLS"}', "args": "[]", "env_names": "[]",
            "allowed_tools": '["lookup"]', "timeout_seconds": "10", "result_max_tokens": "800", "tool_limits": "{}"})
    assert response.status_code == 302
    line = next(r.getMessage() for r in caplog.records if r.name == "docmind.audit")
    assert "'tools' added by 'root-admin'" in line and "https://tools.example.com/mcp" in line
    assert LogEntry.objects.filter(user=admin_user, object_repr="tools").exists()

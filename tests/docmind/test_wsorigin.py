"""The WebSocket origin check: same scheme-default port or explicit port, or a CSRF trusted origin."""
from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator

from docmind.wsorigin import origin_allowed
from project.routing import application


@pytest.mark.parametrize("origin,host,allowed", [
    ("http://localhost:8000", "localhost:8000", True),
    ("http://localhost", "localhost", True),
    ("https://localhost", "localhost", True),
    ("http://[::1]:8000", "[::1]:8000", True),
    ("http://localhost:9999", "localhost:8000", False),  # another program on the same host
    ("http://localhost:8000", "localhost", False),
    ("http://127.0.0.1:8000", "localhost:8000", False),
    ("https://evil.example", "localhost", False),
    ("http://evil.example:8000", "evil.example:8000", False),  # not an allowed host
    ("null", "localhost", False),
    (None, "localhost", False),
    ("http://localhost:notaport", "localhost", False),
])
def test_origin_must_match_the_host_and_port(origin, host, allowed):
    assert origin_allowed(origin=origin, host=host) is allowed


def test_a_csrf_trusted_origin_is_allowed_behind_a_proxy(settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://docmind.example.com"]
    assert origin_allowed(origin="https://docmind.example.com", host="127.0.0.1:8000")
    assert not origin_allowed(origin="https://docmind.example.com:8443", host="127.0.0.1:8000")


# The consumer's stack closes stale connections (a database touch) even for an anonymous socket.
@pytest.mark.django_db
@pytest.mark.parametrize("origin,accepted", [(b"http://localhost:8000", True), (b"http://localhost:9999", False)])
async def test_the_asgi_stack_refuses_a_socket_from_another_port(origin, accepted):
    ws = WebsocketCommunicator(application, "/ws/chat/", headers=[(b"origin", origin), (b"host", b"localhost:8000")])
    try:
        connected, _ = await ws.connect()
        assert connected is accepted
    finally:
        await ws.disconnect()

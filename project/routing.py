"""The ASGI application, composed without starting anything: HTTP through Django (and /mcp/ through the MCP
server), WebSocket through Channels. A server imports it through project.asgi, which also starts the server
process's background work; tests and tools that only route requests import it from here."""
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs Django set up first)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from chat.routing import websocket_urlpatterns  # noqa: E402
from docmind.foreground_asgi import QuestionsFirst  # noqa: E402
from docmind.wsorigin import SameOriginValidator  # noqa: E402
from project.mcp.asgi import McpMount  # noqa: E402

application = ProtocolTypeRouter({
    # A question's request first (docmind.foreground_asgi); /mcp/: the MCP server (token auth); the rest: Django.
    "http": QuestionsFirst(McpMount(django_asgi_app)),
    # Host names against ALLOWED_HOSTS (Channels), then the exact origin, port included.
    "websocket": AllowedHostsOriginValidator(
        SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))),
})

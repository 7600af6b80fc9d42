"""The project: settings, URLs, ASGI routing, start-up, the admin of users and MCP servers, management commands,
health, the /metrics view and the MCP server. It puts the apps together, so it alone may import every one of them;
no app imports it."""

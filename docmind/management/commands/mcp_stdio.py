"""`manage.py mcp_stdio`: the MCP server over stdin/stdout for local clients (Claude Desktop, IDEs).

The session runs as the user whose API token is in DOCMIND_MCP_TOKEN (never a flag: command
lines are visible to other local users), and sees exactly what that user sees over REST.
"""
from __future__ import annotations

import os

import anyio
from django.core.management.base import BaseCommand, CommandError

TOKEN_VARIABLE = "DOCMIND_MCP_TOKEN"


def user_for_token(key: str) -> int:
    """The active user of an API token, or CommandError saying what is wrong."""
    from rest_framework import exceptions
    from rest_framework.authentication import TokenAuthentication

    if not key:
        raise CommandError(f"{TOKEN_VARIABLE} is not set: put an API token there "
                           "(POST /api/auth/token/ or the admin's Tokens page)")
    try:
        user, _ = TokenAuthentication().authenticate_credentials(key.strip())
    except exceptions.AuthenticationFailed as exc:
        raise CommandError(f"{TOKEN_VARIABLE}: {exc.detail}") from None
    return user.pk


class Command(BaseCommand):
    help = "Serve the DocMind MCP server over stdio, as the user of the API token in DOCMIND_MCP_TOKEN."

    def handle(self, *args, **options) -> None:
        from docmind.mcp.server import build_server, set_stdio_user

        user_id = user_for_token(os.environ.get(TOKEN_VARIABLE, ""))
        set_stdio_user(user_id)
        # stdout is the protocol channel: nothing else may be printed there.
        anyio.run(build_server().run_stdio_async)

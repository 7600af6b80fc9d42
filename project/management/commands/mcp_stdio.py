"""`manage.py mcp_stdio`: the MCP server over stdin/stdout for local clients (Claude Desktop, IDEs).

The session runs as the user whose API token is in DOCMIND_MCP_TOKEN (never a flag: command
lines are visible to other local users), and sees exactly what that user sees over REST.

With DOCMIND_MCP_URL (or --url) set to a running server's `/mcp/`, the command relays to that
server: it opens no index itself, so it works while the server holds a Milvus Lite file (which
one process only can open). Without it, the command serves in its own process, which needs the
indexes to itself: over Milvus Lite that means the server must not be running.
"""
from __future__ import annotations

import os

import anyio
import httpx2
from django.core.management.base import BaseCommand, CommandError
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from docmind.indexes.vectorstore import VectorStoreError
from docmind.mcp.relay import relay

TOKEN_VARIABLE = "DOCMIND_MCP_TOKEN"
URL_VARIABLE = "DOCMIND_MCP_URL"


def user_for_token(key: str) -> int:
    """The active user of an API token, or CommandError saying what is wrong."""
    if not key:
        raise CommandError(f"{TOKEN_VARIABLE} is not set: put an API token there "
                           "(POST /api/auth/token/ or the admin's Tokens page)")
    try:
        user, _ = TokenAuthentication().authenticate_credentials(key.strip())
    except exceptions.AuthenticationFailed as exc:
        raise CommandError(f"{TOKEN_VARIABLE}: {exc.detail}") from None
    return user.pk


def open_indexes_or_explain() -> None:
    """Open the stores this process will search, or say why it cannot and what to do instead."""
    # heavy: the indexes load scipy (about 0.3 s); relay mode never opens them
    from docmind.indexes.stores import get_lexical_index, get_vector_store

    try:
        get_vector_store()
        get_lexical_index()
    except VectorStoreError as exc:
        raise CommandError(
            f"{exc}.\nWhile the DocMind server runs, serve through it instead: set {URL_VARIABLE} to its MCP "
            f"endpoint (for example {URL_VARIABLE}=http://127.0.0.1:8000/mcp/) and run mcp_stdio again.") from None


class Command(BaseCommand):
    help = ("Serve the DocMind MCP server over stdio, as the user of the API token in DOCMIND_MCP_TOKEN; with "
            "DOCMIND_MCP_URL (or --url) relay to a running server's /mcp/ instead of opening the indexes here.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--url", default="", help=f"a running server's MCP endpoint (default: ${URL_VARIABLE})")

    def handle(self, *args, **options) -> None:
        token = os.environ.get(TOKEN_VARIABLE, "").strip()
        url = (options.get("url") or os.environ.get(URL_VARIABLE, "")).strip()
        if url:
            self._relay(url, token)
            return
        # heavy: serving here loads the MCP tools, the chat pipeline and the indexes; relay mode needs none of them
        from project.mcp.server import build_server, set_stdio_user

        user_id = user_for_token(token)
        open_indexes_or_explain()
        set_stdio_user(user_id)
        # stdout is the protocol channel: nothing else may be printed there.
        anyio.run(build_server().run_stdio_async)

    @staticmethod
    def _relay(url: str, token: str) -> None:
        if not token:
            user_for_token("")  # the same explanation as in-process
        if not url.startswith(("http://", "https://")):
            raise CommandError(f"{URL_VARIABLE} must be the server's MCP endpoint, e.g. http://127.0.0.1:8000/mcp/")

        async def run() -> None:
            # No read timeout: `ask` writes a whole answer before it replies; the server bounds the turn.
            async with httpx2.AsyncClient(timeout=httpx2.Timeout(10.0, read=None)) as http:
                await relay(url=url, token=token, http=http)

        anyio.run(run)

"""Questions first at the server's door: an ASGI middleware over the HTTP application.

Retrieval marks itself as foreground work (docmind.foreground), but a question sent over HTTP spends as long again
before and after it: the request's middleware, authentication, permission reads and the answer's serialisation,
each waiting for the interpreter lock at every database read and thread hand-off. Uploads arriving meanwhile
(each one tens of milliseconds of the lock: its body, authentication, checksum, rows and file) and the background
steps that give way only while a retrieval runs took it from them: over loopback HTTP a question's p95 during
an upload of 80 short articles was 1.65–2.38 times idle. So
- a question's request (QUESTION_PATHS) is foreground work from the moment it arrives until its response starts;
- a document upload (UPLOAD_PATHS) waits at the door while a question is in flight, at most MAX_WAIT_SECONDS, on
  the event loop, before any of its work has started: an upload is not waited on as a question is.
"""
from __future__ import annotations

import asyncio
import time
from typing import Any

from docmind.foreground import MAX_WAIT_SECONDS, foreground, wait_left

# Requests that ask a question; a streamed answer (the chat API) is foreground until its stream starts, after
# which each retrieval inside it marks itself.
QUESTION_PATHS = frozenset({"/api/kb/retrieve/", "/api/chat/"})
# Requests that add documents (the API's, the admin's form and its bulk upload): work a team starts and leaves,
# not waits on.
UPLOAD_PATHS = frozenset({"/api/kb/documents/", "/api/kb/documents/archive/", "/admin/kb/document/add/",
                          "/admin/kb/document/upload/"})
# How often a waiting upload looks again: a question's stages end and start within milliseconds.
RECHECK_SECONDS = 0.01


class QuestionsFirst:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = _app_path(scope)
        if path in QUESTION_PATHS:
            await self._question(scope, receive, send)
        else:
            if scope.get("method") == "POST" and path in UPLOAD_PATHS:
                await _give_way()
            await self.app(scope, receive, send)

    async def _question(self, scope: dict, receive: Any, send: Any) -> None:
        mark = foreground()
        mark.__enter__()
        marked = True

        def unmark() -> None:
            nonlocal marked
            if marked:
                marked = False
                mark.__exit__(None, None, None)

        async def sending(message: dict) -> None:
            if message["type"] == "http.response.start":
                unmark()
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            unmark()


def _app_path(scope: dict) -> str:
    """The request's path within the application: a server mounted under a prefix (`root_path`) sends it whole."""
    path, root = scope.get("path", ""), scope.get("root_path", "")
    return path[len(root):] if root and path.startswith(root) else path


async def _give_way() -> None:
    """docmind.foreground.give_way on the event loop: sleeps instead of blocking the thread that serves every
    connection."""
    deadline = time.monotonic() + MAX_WAIT_SECONDS
    while (left := min(wait_left(), deadline - time.monotonic())) > 0:
        await asyncio.sleep(min(left, RECHECK_SECONDS))

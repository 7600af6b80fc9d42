"""A minimal ASGI app for transport tests: a WebSocket is accepted and each text message answered with its
length; an HTTP request is answered with the SHA-256 of the body it received."""
from __future__ import annotations

import hashlib


async def app(scope, receive, send) -> None:
    if scope["type"] == "http":
        await _http(receive, send)
        return
    if scope["type"] != "websocket":
        return
    while True:
        event = await receive()
        if event["type"] == "websocket.connect":
            await send({"type": "websocket.accept"})
        elif event["type"] == "websocket.receive":
            await send({"type": "websocket.send", "text": str(len(event.get("text") or ""))})
        else:
            return


async def _http(receive, send) -> None:
    digest = hashlib.sha256()
    while True:
        event = await receive()
        digest.update(event.get("body", b""))
        if not event.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": digest.hexdigest().encode()})

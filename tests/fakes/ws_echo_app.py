"""A minimal ASGI WebSocket app for transport tests: accepts, answers each text message with its length."""
from __future__ import annotations


async def app(scope, receive, send) -> None:
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

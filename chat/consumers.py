"""WebSocket `/ws/chat/`: parse a frame, run one pipeline turn in the turn runner, forward its events."""
from __future__ import annotations

import asyncio
import json
import logging
import threading
from types import SimpleNamespace
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.utils import translation
from django.utils.translation import gettext as _

from chat.events import error_event
from chat.pipeline import ChatPipeline
from chat.runner import HEARTBEAT, ServerBusy, TurnRunner, TurnSlot, get_turn_runner
from docmind.requestlimits import MAX_JSON_DEPTH, too_deep
from kb.access import is_active_user

log = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
CLOSE_MESSAGE_TOO_BIG = 1009  # RFC 6455
# A question is a few kilobytes; the server's transport limit (docmind.serve) is above this one, so a
# frame over it still reaches the consumer, which answers with an error event and a 1009 close.
MAX_FRAME_BYTES = 1024 * 1024
_OPTIONAL_IDS = ("conversation_id", "document_id")


def parse_frame(text: str | None) -> tuple[str, dict[str, Any]]:
    """("ask", fields) / ("cancel", {}) or ValueError with a message fit for the client."""
    if text is None:
        raise ValueError(_("Binary frames are not supported; send JSON text."))
    if too_deep(text):
        # Refused before json.loads, whose recursion a deeply nested frame would exhaust.
        raise ValueError(_("The JSON nests too deeply (at most %(depth)d levels).") % {"depth": MAX_JSON_DEPTH})
    try:
        frame = json.loads(text)
    except json.JSONDecodeError:
        raise ValueError(_("The frame is not valid JSON.")) from None
    if not isinstance(frame, dict):
        raise ValueError(_("The frame must be a JSON object."))
    kind = frame.get("type")
    if kind == "cancel":
        return "cancel", {}
    if kind != "ask":
        raise ValueError(_('"type" must be "ask" or "cancel".'))
    if not isinstance(frame.get("message"), str):
        raise ValueError(_("\"message\" must be a string."))
    fields: dict[str, Any] = {"message": frame["message"]}
    for name in _OPTIONAL_IDS:
        value = frame.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(_("\"%(field)s\" must be an integer or null.") % {"field": name})
        fields[name] = value
    kb = frame.get("kb")
    if kb is not None and (not isinstance(kb, list) or not kb
                           or any(isinstance(v, bool) or not isinstance(v, int) for v in kb)):
        raise ValueError("kb must be a non-empty list of integer ids or null")
    fields["kb"] = kb
    for name in ("regenerate", "edit"):
        flag = frame.get(name, False)
        if not isinstance(flag, bool):
            raise ValueError(_("\"%(field)s\" must be true or false.") % {"field": name})
        if flag:
            fields[name] = True
    return "ask", fields


def scope_language(scope: dict[str, Any]) -> str:
    """The language the user's pages are in: their chosen one (cookie), else the browser's, else the default.

    LocaleMiddleware does not run for WebSockets, so the consumer picks it the same way from the
    handshake, with Django's own rules (supported languages, variants, Accept-Language weights).
    """
    headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope.get("headers", ())}
    request = SimpleNamespace(COOKIES=scope.get("cookies") or {},
                              META={"HTTP_ACCEPT_LANGUAGE": headers.get("accept-language", "")})
    return translation.get_language_from_request(request)  # type: ignore[arg-type]


class ChatConsumer(AsyncJsonWebsocketConsumer):
    pipeline_factory = ChatPipeline
    # The consumer only talks to its own socket and never to a group, so it does not subscribe to
    # the channel layer: live chat then keeps working while Redis is down, and costs no Redis
    # connection per open socket.
    channel_layer_alias = None  # type: ignore[assignment]

    async def connect(self) -> None:
        self.user = self.scope.get("user")
        self.task: asyncio.Task[None] | None = None
        self.cancel_event: threading.Event | None = None
        self.slot: TurnSlot | None = None
        self.language = scope_language(self.scope)
        await self.accept()
        if not getattr(self.user, "is_authenticated", False):
            # Accept first so that the client sees a meaningful close code, not a bare 403.
            await self.close(code=CLOSE_UNAUTHENTICATED)

    async def disconnect(self, code: int) -> None:
        await self._stop_turn()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        with translation.override(self.language):
            await self._receive(text_data)

    async def _receive(self, text_data: str | None) -> None:
        if text_data is not None and len(text_data) > MAX_FRAME_BYTES // 4 and len(
                text_data.encode("utf-8", "surrogatepass")) > MAX_FRAME_BYTES:
            message = _("The frame is too large (at most %(size)d bytes).") % {"size": MAX_FRAME_BYTES}
            await self.send_json(error_event("frame_too_large", message).to_ws())
            await self._stop_turn()
            await self.close(code=CLOSE_MESSAGE_TOO_BIG)
            return
        try:
            kind, fields = parse_frame(text_data)
        except ValueError as exc:
            await self.send_json(error_event("bad_frame", str(exc)).to_ws())
            return
        if kind == "cancel":
            await self._stop_turn()
            return
        if not await _still_active(self.user):
            # The account was deactivated (or deleted) while the socket was open: no more turns on it.
            await self.send_json(error_event("unauthenticated", _("Authentication required.")).to_ws())
            await self._stop_turn()
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        if self.task is not None and not self.task.done():
            message = _("The previous question is still being answered; wait or cancel it first.")
            await self.send_json(error_event("busy", message).to_ws())
            return
        runner = get_turn_runner()
        try:
            self.slot = runner.reserve(owner=self.user.pk)
        except ServerBusy as exc:
            await self.send_json(error_event(exc.code, str(exc)).to_ws())
            return
        self.cancel_event = threading.Event()
        self.task = asyncio.create_task(self._run_turn(runner, self.slot, fields, self.cancel_event))

    async def _run_turn(self, runner: TurnRunner, slot: TurnSlot, fields: dict[str, Any],
                        cancel: threading.Event) -> None:
        pipeline = self.pipeline_factory()

        def produce():  # noqa: ANN202 - a generator of ChatEvents, run in the worker thread
            return pipeline.run(user=self.user, cancel=cancel, **fields)

        try:
            async for item in runner.stream(slot, produce, cancel, language=self.language):
                if item is not HEARTBEAT:
                    await self.send_json(item.to_ws())
        except Exception:  # noqa: BLE001 - the socket may already be gone
            log.debug("chat consumer: could not forward an event", exc_info=True)
        finally:
            slot.release()  # only matters when the turn never reached a thread

    async def _stop_turn(self) -> None:
        """Cancel the running turn and wait for it, so the cancelled answer is saved before we return."""
        if self.cancel_event is not None:
            self.cancel_event.set()
        if self.task is not None and not self.task.done():
            try:
                await asyncio.wait_for(asyncio.shield(self.task), timeout=10)
            except (TimeoutError, asyncio.CancelledError):
                self.task.cancel()
        if self.slot is not None:
            self.slot.release()  # a task cancelled before it started never handed its slot to a thread


@database_sync_to_async
def _still_active(user: Any) -> bool:
    """The handshake's user is a snapshot; ask (kb.access, which reads the database) whether the account may
    still ask."""
    return is_active_user(user)

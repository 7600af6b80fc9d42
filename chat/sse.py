"""SSE `POST /api/chat/`: validate and save the question, then stream the turn as `text/event-stream`."""
from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.settings import api_settings

from chat.events import SSE_HEARTBEAT
from chat.pipeline import ChatInputError, ChatPipeline, ChatTurn
from chat.runner import HEARTBEAT, ServerBusy, TurnSlot, get_turn_runner
from chat.serializers import ChatRequestSerializer
from docmind.http_errors import method_not_allowed

log = logging.getLogger(__name__)

pipeline_factory = ChatPipeline
# Well under the idle timeouts of common proxies (nginx 60 s) and browsers.
HEARTBEAT_SECONDS = 15.0
BUSY_RETRY_AFTER_SECONDS = 5


class _KeyPolicy:
    """What DRF's authenticators see as this view: an API key of either scope may ask (apikeys.authentication)."""

    api_key_scopes = {"post": ("read", "ask")}


def _prepare(request: HttpRequest, slot: TurnSlot) -> ChatTurn | JsonResponse:
    """Authenticate (token, API key, or session with CSRF, as DRF does), validate, save the question."""
    try:
        raw = request.body  # read first: DRF's CSRF check may parse the stream, and the body is cached
    except RequestDataTooBig:
        return JsonResponse({"error": _("The request body is too large."), "code": "body_too_large"}, status=413)
    drf_request = Request(request, authenticators=[auth() for auth in api_settings.DEFAULT_AUTHENTICATION_CLASSES],
                          parsers=[JSONParser()], parser_context={"view": _KeyPolicy})
    try:
        user = drf_request.user
    except exceptions.APIException as exc:
        return JsonResponse({"error": str(exc.detail)}, status=exc.status_code)
    if not user.is_authenticated:
        return JsonResponse({"error": _("Authentication required.")}, status=401)
    try:
        body: Any = json.loads(raw or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return JsonResponse({"error": _("The body must be JSON.")}, status=400)
    serializer = ChatRequestSerializer(data=body if isinstance(body, dict) else {})
    if not serializer.is_valid():
        return JsonResponse({"error": _("Invalid request."), "fields": serializer.errors}, status=400)
    try:
        slot.claim_for(user.pk)  # the user's share, before the question is saved
    except ServerBusy as exc:
        return _busy(exc)
    try:
        return pipeline_factory().start_turn(user=user, **serializer.validated_data)
    except ChatInputError as exc:
        return JsonResponse({"error": exc.message, "code": exc.code}, status=exc.status)


def _prepare_or_unavailable(request: HttpRequest, slot: TurnSlot) -> ChatTurn | JsonResponse:
    try:
        return _prepare(request, slot)
    except DatabaseError:
        # The token lookup or saving the question failed: a JSON answer the client can parse.
        log.exception("chat: the database failed before the turn started")
        return JsonResponse({"error": _("The database is unavailable; try again shortly."), "code": "unavailable"},
                            status=503)


class _TurnResponse(StreamingHttpResponse):
    """Gives back a slot whose turn never started (the client left before the stream began)."""

    def __init__(self, *args: Any, slot: TurnSlot, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._slot = slot

    def close(self) -> None:
        self._slot.release()
        super().close()


def _busy(exc: ServerBusy) -> JsonResponse:
    response = JsonResponse({"error": str(exc), "code": exc.code}, status=exc.status)
    response["Retry-After"] = str(BUSY_RETRY_AFTER_SECONDS)
    return response


# CSRF is enforced by DRF's SessionAuthentication for cookie sessions only; token clients need none.
@csrf_exempt
async def chat_stream(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return method_not_allowed(request, ["POST"])  # JSON, as every answer under /api/
    runner = get_turn_runner()
    try:
        slot = runner.reserve()  # before anything is saved: a refused turn leaves no trace
    except ServerBusy as exc:
        return _busy(exc)
    try:
        prepared = await sync_to_async(_prepare_or_unavailable)(request, slot)
    except BaseException:
        slot.release()
        raise
    if isinstance(prepared, JsonResponse):
        slot.release()
        return prepared
    turn = prepared
    cancel = threading.Event()
    language = translation.get_language()  # LocaleMiddleware's choice for this request

    async def body() -> AsyncIterator[bytes]:
        # Django cancels this generator when the client disconnects; the runner then sets
        # `cancel`, and the turn's model call and steps stop.
        async for item in runner.stream(slot, lambda: pipeline_factory().answer(turn, cancel=cancel), cancel,
                                        heartbeat=HEARTBEAT_SECONDS, language=language):
            yield SSE_HEARTBEAT if item is HEARTBEAT else item.to_sse()

    response = _TurnResponse(body(), slot=slot, content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx would otherwise hold the stream back
    return response

"""SSE `POST /api/chat/`: validate and save the question, then stream the turn as `text/event-stream`."""
from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from rest_framework import exceptions
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.parsers import JSONParser
from rest_framework.request import Request

from chat.events import events_from_thread
from chat.pipeline import ChatInputError, ChatPipeline, ChatTurn
from chat.serializers import ChatRequestSerializer

pipeline_factory = ChatPipeline


def _prepare(request: HttpRequest) -> ChatTurn | JsonResponse:
    """Authenticate (token, or session with CSRF, as DRF does), validate, save the question."""
    raw = request.body  # read first: DRF's CSRF check may parse the stream, and the body is cached
    drf_request = Request(request, authenticators=[TokenAuthentication(), SessionAuthentication()],
                          parsers=[JSONParser()])
    try:
        user = drf_request.user
    except exceptions.APIException as exc:
        return JsonResponse({"error": str(exc.detail)}, status=exc.status_code)
    if not user.is_authenticated:
        return JsonResponse({"error": "authentication required"}, status=401)
    try:
        body: Any = json.loads(raw or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return JsonResponse({"error": "body must be JSON"}, status=400)
    serializer = ChatRequestSerializer(data=body if isinstance(body, dict) else {})
    if not serializer.is_valid():
        return JsonResponse({"error": "invalid request", "fields": serializer.errors}, status=400)
    try:
        return pipeline_factory().start_turn(user=user, **serializer.validated_data)
    except ChatInputError as exc:
        return JsonResponse({"error": exc.message, "code": exc.code}, status=exc.status)


# CSRF is enforced by DRF's SessionAuthentication for cookie sessions only; token clients need none.
@csrf_exempt
@require_POST
async def chat_stream(request: HttpRequest) -> HttpResponse:
    prepared = await sync_to_async(_prepare)(request)
    if isinstance(prepared, JsonResponse):
        return prepared
    turn = prepared
    cancel = threading.Event()

    async def body() -> AsyncIterator[bytes]:
        # Django cancels this generator when the client disconnects; events_from_thread then
        # sets `cancel` and the worker stops between steps.
        async for event in events_from_thread(lambda: pipeline_factory().answer(turn, cancel=cancel), cancel):
            yield event.to_sse()

    response = StreamingHttpResponse(body(), content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx would otherwise hold the stream back
    return response

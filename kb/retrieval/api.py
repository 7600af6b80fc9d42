"""POST /api/kb/retrieve/: the evidence the answer step would see for a query, with grade and timings."""
from __future__ import annotations

from typing import Any

from django.http import Http404
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config_admin.conf import ai_config
from docmind.errors import error_response, first_error
from docmind.fields import IdField, StrictCharField
from kb.access import KbNotFound, requested_kb_ids
from kb.citation_links import CitationLinks

MAX_TOP_K = 50


class RetrieveRequest(serializers.Serializer):
    query = StrictCharField(trim_whitespace=True, allow_blank=True,
                                  error_messages={"required": "query is required", "invalid": "query must be text"})
    top_k = serializers.JSONField(required=False)
    kb = serializers.ListField(child=IdField(), required=False, allow_null=True,
                               allow_empty=False)

    def __init__(self, *args: Any, max_chars: int, default_top_k: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._max_chars = max_chars
        self._default_top_k = default_top_k

    def validate_query(self, value: str) -> str:
        if not value:
            raise serializers.ValidationError("query must not be empty")
        if len(value) > self._max_chars:
            raise serializers.ValidationError(f"query is {len(value)} characters; the limit is {self._max_chars}")
        return value

    def validate_top_k(self, value: Any) -> int:
        # JSON true is an int to Python and 2.0 is not an int to anyone: accept only real integers.
        if isinstance(value, bool) or not isinstance(value, int):
            raise serializers.ValidationError("top_k must be an integer")
        if not 1 <= value <= MAX_TOP_K:
            raise serializers.ValidationError(f"top_k must be between 1 and {MAX_TOP_K}")
        return value


_CHUNK_FIELDS = {
    "chunk_id": serializers.CharField(help_text="the chunk's id as text (web evidence: its own key)"),
    "document_id": serializers.IntegerField(allow_null=True),
    "document_title": serializers.CharField(), "domain": serializers.CharField(), "content": serializers.CharField(),
    "score": serializers.FloatField(), "source": serializers.CharField(),
    "url": serializers.CharField(required=False, help_text="web evidence only"),
    "location": serializers.JSONField(allow_null=True, help_text=(
        'where the passage is in the original: {"page": 3, "boxes": [[x0, top, x1, bottom], ...]} (PDF points '
        'from the top-left corner), {"sheet": "name", "rows": [first, last]} or {"slide": 3}; null where none'))}


class RetrieveView(APIView):
    """Every signed-in user may retrieve; the request gets one config snapshot for all its stages."""

    permission_classes = [IsAuthenticated]
    # API keys: see apikeys.authentication (a read key retrieves; an ask key only asks).
    api_key_scopes = {"post": ("read",)}
    parser_classes = [JSONParser]  # `kb` is a list, which form encodings cannot state unambiguously

    # The request serializer takes its limits from the config snapshot, so the schema describes its shape.
    @extend_schema(
        request=inline_serializer("Retrieve", {
            "query": serializers.CharField(help_text="not blank; the longest accepted is a configuration row"),
            "top_k": serializers.IntegerField(required=False, min_value=1, max_value=MAX_TOP_K),
            "kb": serializers.ListField(child=IdField(), required=False, allow_null=True,
                                        allow_empty=False, min_length=1,
                                        help_text="knowledge-base ids; every readable one when absent")}),
        responses={200: inline_serializer("RetrieveResponse", {
            "chunks": inline_serializer("RetrievedChunk", _CHUNK_FIELDS, many=True), "grade": serializers.DictField(),
            "timings_ms": serializers.DictField(child=serializers.FloatField())}),
            400: error_response("invalid request: `error` names the first problem, `fields` each one"),
            404: error_response("a knowledge base in `kb` the caller cannot read")})
    def post(self, request: Request) -> Response:
        try:
            return Response(retrieve(request.data, user=request.user))
        except RetrieveInputError as exc:
            return Response({"error": exc.message, "fields": exc.fields}, status=400)


class RetrieveInputError(ValueError):
    def __init__(self, message: str, fields: dict[str, Any]) -> None:
        super().__init__(message)
        self.message, self.fields = message, fields


def retrieve(data: Any, *, user: Any) -> dict[str, Any]:
    """Validate a retrieve request and run the one-shot pipeline on one config snapshot, searching only
    the knowledge bases `user` may read (or the readable ones it names in `kb`).

    The REST view and the MCP server's search tool both come here, so they validate and answer
    alike; raises RetrieveInputError (first problem as text, all of them by field) and Http404 for a
    knowledge base the user cannot ask (a view grant is enough: a chunk of a base the user may not read is
    answered with its snippet only, as a source card shows it).
    """
    # heavy: the retrieval stages load scipy (MMR, about 0.2 s); the URL conf imports this module
    from kb.retrieval.compose import build_one_shot_retriever

    snapshot = ai_config.snapshot()
    form = RetrieveRequest(data=data, max_chars=int(snapshot["retrieval.query_max_chars"]),
                           default_top_k=int(snapshot["retrieval.top_k"]))
    if not form.is_valid():
        where, message = first_error(form.errors)
        raise RetrieveInputError(f"{where}: {message}", dict(form.errors))
    query: str = form.validated_data["query"]
    top_k: int = form.validated_data.get("top_k") or int(snapshot["retrieval.top_k"])
    try:
        kb_ids = requested_kb_ids(user, form.validated_data.get("kb"), ask=True)
    except KbNotFound:
        raise Http404(_("No such knowledge base.")) from None
    evidence = build_one_shot_retriever(snapshot, kb_ids=kb_ids, top_k=top_k).run(query=query, top_k=top_k)
    links = CitationLinks(user)
    links.prefetch_evidence(evidence.chunks)
    return {
        "chunks": [_chunk_json({**c.as_dict(), "content": links.quote(c)}) for c in evidence.chunks],
        "grade": evidence.grade.as_dict(),
        "timings_ms": dict(evidence.timings_ms),
    }


def _chunk_json(data: dict[str, Any]) -> dict[str, Any]:
    keys = ("chunk_id", "document_id", "document_title", "domain", "content", "score", "source")
    out = {k: data[k] for k in keys}
    out["location"] = data.get("location")
    if data.get("url"):
        out["url"] = data["url"]  # web evidence is cited by its address
    return out

"""GET /metrics (Prometheus text, staff only) and the middleware that counts HTTP requests."""
from __future__ import annotations

from collections.abc import Callable

from asgiref.sync import iscoroutinefunction
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers
from django.utils.decorators import sync_and_async_middleware
from drf_spectacular.utils import extend_schema
from prometheus_client import REGISTRY
from prometheus_client.exposition import choose_encoder
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from docmind.telemetry import metrics
from kb.permissions import IsStaff
from project.telemetry import collectors


class _PrometheusRenderer(BaseRenderer):
    """Only refusals pass through here (the metrics themselves are a plain HttpResponse)."""

    media_type = "text/plain"
    format = "prometheus"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        detail = data.get("error") or data.get("detail") if isinstance(data, dict) else data
        return f"{detail}\n".encode()


class _ScraperNegotiation(BaseContentNegotiation):
    """The exposition format is chosen in the view by prometheus_client (text or OpenMetrics); DRF must
    not refuse an `Accept: application/openmetrics-text` scraper with 406 before the view runs."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


@extend_schema(exclude=True)  # Prometheus text for scrapers, not part of the REST API
class MetricsView(APIView):
    """Token first, so an anonymous caller gets 401 with `WWW-Authenticate: Token`; non-staff get 403."""

    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsStaff]
    renderer_classes = [_PrometheusRenderer]
    content_negotiation_class = _ScraperNegotiation

    def get(self, request: Request) -> HttpResponse:
        collectors.register_collectors()
        encode, content_type = choose_encoder(request.META.get("HTTP_ACCEPT", ""))
        response = HttpResponse(encode(REGISTRY), content_type=content_type)
        patch_vary_headers(response, ["Accept"])
        return response


@sync_and_async_middleware
def request_metrics_middleware(get_response: Callable) -> Callable:
    """Counts every answered request by method and status class (no path label: it would explode).

    Both sync and async, so the streaming chat view is not pushed through a thread adapter."""
    if iscoroutinefunction(get_response):
        async def async_middleware(request: HttpRequest) -> HttpResponse:
            response = await get_response(request)
            _count(request, response)
            return response
        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        _count(request, response)
        return response
    return middleware


def _count(request: HttpRequest, response: HttpResponse) -> None:
    metrics.HTTP_REQUESTS.labels(method=request.method or "", status=f"{response.status_code // 100}xx").inc()

"""The schema endpoint and its Swagger UI page, answering errors as the rest of /api/ does."""
from __future__ import annotations

from typing import Any

from django.contrib.auth.views import redirect_to_login
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework import exceptions
from rest_framework.renderers import JSONRenderer


class SchemaView(SpectacularAPIView):
    """The schema (YAML or JSON); its errors (signed out, say) are JSON like every error under /api/."""

    def handle_exception(self, exc: Exception) -> Any:
        response = super().handle_exception(exc)
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return response


class SchemaDocsView(SpectacularSwaggerSplitView):
    """The Swagger UI page: a signed-out visitor is sent to the login page and back, not shown a bare 401."""

    def handle_exception(self, exc: Exception) -> Any:
        if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
            return redirect_to_login(self.request.get_full_path())
        response = super().handle_exception(exc)
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return response

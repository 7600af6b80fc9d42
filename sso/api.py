"""Sessions over the API: a user lists and ends their own; an administrator ends all of one user's."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from docmind.errors import error_response
from kb.permissions import IsAdministrator
from sso.models import UserSession
from sso.sessions import session_end, sessions_of, user_sessions_end_all


class SessionSerializer(serializers.ModelSerializer):
    current = serializers.SerializerMethodField()

    class Meta:
        model = UserSession
        fields = ["id", "created_at", "ip_address", "user_agent", "provider", "current"]

    def get_current(self, row: UserSession) -> bool:
        request = self.context["request"]
        return bool(getattr(request, "session", None)) and row.session_key == request.session.session_key


class MySessionsView(APIView):
    @extend_schema(responses=SessionSerializer(many=True))
    def get(self, request) -> Response:
        rows = sessions_of(user=request.user)
        return Response(SessionSerializer(rows, many=True, context={"request": request}).data)


class MySessionView(APIView):
    @extend_schema(responses={204: None, 404: error_response("no such session of yours")})
    def delete(self, request, pk: int) -> Response:
        if not session_end(user=request.user, session_id=pk):
            return Response({"error": "no such session", "code": "not_found"}, status=status.HTTP_404_NOT_FOUND)
        return Response(status=status.HTTP_204_NO_CONTENT)


class UserSessionsView(APIView):
    """End every session of one user and revoke their API token (administrators only)."""

    permission_classes = [IsAdministrator]

    @extend_schema(request=None, responses={200: inline_serializer("SessionsEnded", {
        "ended": serializers.IntegerField()}), 404: error_response("no such user")})
    def delete(self, request, pk: int) -> Response:
        user = get_object_or_404(get_user_model(), pk=pk)
        keep = request.session.session_key if user.pk == request.user.pk and hasattr(request, "session") else None
        return Response({"ended": user_sessions_end_all(user=user, keep_session_key=keep)})

"""Token login for API clients and a who-am-I endpoint."""
from __future__ import annotations

from django.contrib.auth import authenticate
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from docmind.errors import error_response
from docmind.fields import StrictCharField
from docmind.roles import ROLES, roles_of
from docmind.signin import directory_unavailable
from docmind.throttling import FailSafeScopedRateThrottle


class CredentialsSerializer(serializers.Serializer):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=256, trim_whitespace=False)


class TokenView(APIView):
    """POST {username, password} → {token}; 401 on wrong credentials."""

    permission_classes = [AllowAny]
    authentication_classes: list = []
    throttle_classes = [FailSafeScopedRateThrottle]
    throttle_scope = "auth"

    @extend_schema(request=CredentialsSerializer, responses={
        200: inline_serializer("Token", {"token": serializers.CharField()}),
        401: error_response("wrong username or password"),
        503: error_response("the directory could not be asked (directory accounts only; local accounts still work)"),
        429: error_response("too many attempts from this address, or this username is locked out here "
                            "(see Retry-After)")})
    def post(self, request) -> Response:
        creds = CredentialsSerializer(data=request.data)
        creds.is_valid(raise_exception=True)
        # The Django request, not DRF's wrapper: the lockout backend marks it, and the lockout
        # middleware (which only sees the Django request) then answers 429 instead of 401.
        user = authenticate(request._request, **creds.validated_data)
        if user is None:
            if directory_unavailable(request._request):
                return Response({"error": _("The directory is unavailable, so directory accounts cannot sign in "
                                            "right now. Local accounts still can."), "code": "directory_unavailable"},
                                status=status.HTTP_503_SERVICE_UNAVAILABLE)
            return Response({"error": _("Wrong username or password.")}, status=status.HTTP_401_UNAUTHORIZED)
        token, _created = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


class MeView(APIView):
    @extend_schema(responses=inline_serializer("Me", {
        "id": serializers.IntegerField(), "username": serializers.CharField(),
        "roles": serializers.ListField(child=serializers.ChoiceField(choices=list(ROLES)))}))
    def get(self, request) -> Response:
        user = request.user
        roles = roles_of(user)
        return Response({
            "id": user.id,
            "username": user.username,
            "roles": [r for r in ROLES if roles is not None and roles.holds(r)],
        })

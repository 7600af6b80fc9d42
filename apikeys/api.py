"""`/api/keys/`: issue (the secret shown once), list and revoke API keys."""
from __future__ import annotations

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apikeys import services
from apikeys.models import ApiKey, KeyScope
from docmind.errors import error_response
from docmind.fields import IdField, NameField
from kb.access import KbNotFound


class ApiKeySerializer(serializers.ModelSerializer):
    kbs = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    revoked = serializers.SerializerMethodField()

    class Meta:
        model = ApiKey
        fields = ["id", "name", "prefix", "kbs", "scope", "allowed_origins", "expires_at", "revoked", "revoked_at",
                  "last_used_at", "created_by", "created_at"]
        read_only_fields = fields

    def get_revoked(self, key: ApiKey) -> bool:
        return key.revoked_at is not None


class ApiKeyIssuedSerializer(ApiKeySerializer):
    key = serializers.SerializerMethodField(help_text="The whole key: shown this once, stored only as a hash.")

    class Meta(ApiKeySerializer.Meta):
        fields = ["key", *ApiKeySerializer.Meta.fields]
        read_only_fields = fields

    def get_key(self, key: ApiKey) -> str:
        return self.context["secret"]


class ApiKeyWrite(serializers.Serializer):
    name = NameField(max_length=128)
    kbs = serializers.ListField(child=IdField(), min_length=1,
                                help_text="Knowledge-base ids; the key reaches these and no others.")
    scope = serializers.ChoiceField(choices=KeyScope.choices,
                                    help_text="read: as a read grant (retrieve, documents, chat, MCP); "
                                              "ask: questions only (chat and MCP ask), answers and snippets.")
    expires_at = serializers.DateTimeField(required=False, allow_null=True)
    allowed_origins = serializers.ListField(child=serializers.CharField(max_length=255), required=False,
                                            max_length=20, help_text="Pages (scheme://host[:port]) that may "
                                            "embed the chat widget with this key; only for scope ask.")


class ApiKeyListView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]  # `kbs` and `allowed_origins` are lists, which forms cannot state plainly

    @extend_schema(responses=ApiKeySerializer(many=True))
    def get(self, request: Request) -> Response:
        """Your keys (an administrator's: everyone's). The secrets are never shown again."""
        return Response(ApiKeySerializer(services.keys_visible_to(request.user), many=True).data)

    @extend_schema(request=ApiKeyWrite, responses={
        201: ApiKeyIssuedSerializer, 400: error_response("an invalid name, scope, expiry or origin"),
        403: error_response("only administrators and base editors issue keys, for bases they edit"),
        404: error_response("a knowledge base the caller cannot see")})
    def post(self, request: Request) -> Response:
        if not services.can_issue_keys(request.user):
            raise PermissionDenied(_("Only administrators and knowledge-base editors may issue API keys."))
        form = ApiKeyWrite(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            issued = services.key_create(creator=request.user, name=data["name"], kb_ids=data["kbs"],
                                         scope=data["scope"], expires_at=data.get("expires_at"),
                                         allowed_origins=data.get("allowed_origins"))
        except KbNotFound:
            raise NotFound("no such knowledge base") from None
        except services.KeyForbidden as exc:
            raise PermissionDenied(str(exc)) from None
        except services.KeyRequestError as exc:
            return Response({"error": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(ApiKeyIssuedSerializer(issued.key, context={"secret": issued.secret}).data,
                        status=status.HTTP_201_CREATED)


class ApiKeyDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={204: None, 404: error_response("no such key, or not yours")})
    def delete(self, request: Request, pk: int) -> Response:
        """Revoke the key at once; the row stays, marked revoked, so its use can still be traced."""
        if not services.key_revoke(user=request.user, key_id=pk):
            raise NotFound("no such API key")
        return Response(status=status.HTTP_204_NO_CONTENT)

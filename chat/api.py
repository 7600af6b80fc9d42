"""`/api/conversations/`: the caller's own conversations only; another user's id is a 404."""
from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from chat import selectors, services
from chat.models import Conversation, Message
from chat.pipeline import payloads
from chat.serializers import (
    ConversationDetailSerializer,
    ConversationRenameSerializer,
    ConversationSerializer,
    FeedbackSerializer,
)
from kb.citation_links import CitationLinks


class ConversationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin,
                          viewsets.GenericViewSet):
    http_method_names = ["get", "patch", "delete", "head", "options"]

    def get_queryset(self) -> QuerySet[Conversation]:
        if getattr(self, "swagger_fake_view", False):  # schema generation has no signed-in user
            return Conversation.objects.none()
        rows = selectors.conversation_list(user=self.request.user)
        return rows.prefetch_related("messages__feedback") if self.action == "retrieve" else rows

    def get_serializer_class(self) -> type:
        return ConversationDetailSerializer if self.action == "retrieve" else ConversationSerializer

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        response = super().retrieve(request, *args, **kwargs)
        # Each citation and source card links to the reader only where the caller may read the original now.
        response.data["messages"] = payloads.messages_with_reader_links(response.data["messages"],
                                                                       CitationLinks(request.user))
        return response

    @extend_schema(request=ConversationRenameSerializer, responses=ConversationSerializer)
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        conversation = self.get_object()
        data = ConversationRenameSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.conversation_rename(conversation=conversation, title=data.validated_data["title"])
        return Response(ConversationSerializer(self.get_queryset().get(pk=conversation.pk)).data)

    def perform_destroy(self, instance: Conversation) -> None:
        services.conversation_delete(conversation=instance)


class MessageFeedbackView(APIView):
    """PUT {rating: up|down, comment?} records the caller's verdict on one of their answers; DELETE takes it back."""

    def _answer(self, request: Request, pk: int):
        try:
            return selectors.answer_get(user=request.user, message_id=pk)
        except Message.DoesNotExist:
            raise NotFound(_("No such answer.")) from None  # another user's answer looks exactly like none

    @extend_schema(request=FeedbackSerializer, responses={200: FeedbackSerializer})
    def put(self, request: Request, pk: int) -> Response:
        answer = self._answer(request, pk)
        data = FeedbackSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        feedback = services.message_feedback_set(user=request.user, message=answer, **data.validated_data)
        return Response({"rating": feedback.rating, "comment": feedback.comment})

    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        services.message_feedback_clear(user=request.user, message=self._answer(request, pk))
        return Response(status=status.HTTP_204_NO_CONTENT)

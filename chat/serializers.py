"""Shapes of chat requests and of conversations in the API (no logic beyond field validation)."""
from __future__ import annotations

from rest_framework import serializers

from chat.models import Conversation, FeedbackRating, Message
from chat.saved_logs import with_current_names
from docmind.fields import IdField, NameField, StrictBooleanField, StrictCharField, TextField


class ChatRequestSerializer(serializers.Serializer):
    # Emptiness and length are the pipeline's rules (the limit is a config row), not the serializer's.
    message = StrictCharField(allow_blank=True, trim_whitespace=False)
    conversation_id = serializers.IntegerField(required=False, allow_null=True, default=None)
    document_id = serializers.IntegerField(required=False, allow_null=True, default=None)
    # Knowledge-base ids to search; absent or null means every one the caller can read.
    kb = serializers.ListField(child=IdField(), required=False, allow_null=True,
                               allow_empty=False, default=None)
    # Answer the conversation's last question again in place of its answer (the same question only).
    regenerate = StrictBooleanField(required=False, default=False)
    # `message` replaces the conversation's last question, which is then answered anew in place of its answer.
    edit = StrictBooleanField(required=False, default=False)


class FeedbackSerializer(serializers.Serializer):
    rating = serializers.ChoiceField(choices=FeedbackRating.choices)
    comment = TextField(required=False, allow_blank=True, default="", max_length=2000)


class MessageSerializer(serializers.ModelSerializer):
    # Only the conversation's owner can give feedback, so an answer carries at most the caller's own.
    feedback = serializers.SerializerMethodField()

    class Meta:
        model = Message
        fields = ["id", "role", "content", "citations", "retrieval_log", "confidence_score", "confidence_band",
                  "status", "error", "created_at", "feedback"]
        read_only_fields = fields

    def to_representation(self, instance: Message) -> dict:
        data = super().to_representation(instance)
        # A log saved before the wire became snake_case reads as one saved today.
        data["retrieval_log"] = with_current_names(data["retrieval_log"])
        return data

    def get_feedback(self, message: Message) -> dict | None:
        rows = list(message.feedback.all())
        return {"rating": rows[0].rating, "comment": rows[0].comment} if rows else None


class ConversationSerializer(serializers.ModelSerializer):
    message_count = serializers.IntegerField(read_only=True, default=0)

    class Meta:
        model = Conversation
        fields = ["id", "title", "created_at", "updated_at", "message_count"]
        read_only_fields = ["id", "created_at", "updated_at", "message_count"]


class ConversationDetailSerializer(ConversationSerializer):
    messages = MessageSerializer(many=True, read_only=True)

    class Meta(ConversationSerializer.Meta):
        fields = [*ConversationSerializer.Meta.fields, "messages"]


class ConversationRenameSerializer(serializers.Serializer):
    openapi_required = ("title",)  # a rename without a title is refused, PATCH or not

    title = NameField(max_length=120, allow_blank=False)

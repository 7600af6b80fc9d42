"""Shapes of chat requests and of conversations in the API (no logic beyond field validation)."""
from __future__ import annotations

from rest_framework import serializers

from chat.models import Conversation, Message


class ChatRequestSerializer(serializers.Serializer):
    # Emptiness and length are the pipeline's rules (the limit is a config row), not the serializer's.
    message = serializers.CharField(allow_blank=True, trim_whitespace=False)
    conversation_id = serializers.IntegerField(required=False, allow_null=True, default=None)
    document_id = serializers.IntegerField(required=False, allow_null=True, default=None)


class MessageSerializer(serializers.ModelSerializer):
    class Meta:
        model = Message
        fields = ["id", "role", "content", "citations", "retrieval_log", "confidence_score", "confidence_band",
                  "status", "error", "created_at"]
        read_only_fields = fields


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
    title = serializers.CharField(max_length=120, allow_blank=False)

"""API routes of the chat app, mounted at /api/."""
from django.urls import include, path
from rest_framework.routers import SimpleRouter

from chat.api import ConversationViewSet, MessageFeedbackView
from chat.sse import chat_stream

router = SimpleRouter()
router.register("conversations", ConversationViewSet, basename="conversation")

urlpatterns = [
    path("chat/", chat_stream, name="api-chat"),
    path("messages/<int:pk>/feedback/", MessageFeedbackView.as_view(), name="message-feedback"),
    path("", include(router.urls)),
]

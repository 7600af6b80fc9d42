"""WebSocket URL patterns; asgi.py wraps them in origin validation and session authentication."""
from django.urls import path

from chat.consumers import ChatConsumer

websocket_urlpatterns = [path("ws/chat/", ChatConsumer.as_asgi())]

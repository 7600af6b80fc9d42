"""The chat page at /."""
from django.urls import path

from chat.views import chat_page

app_name = "chat"

urlpatterns = [path("", chat_page, name="page")]

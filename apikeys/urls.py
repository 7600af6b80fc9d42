"""/api/keys/: API keys."""
from django.urls import path

from apikeys import api

app_name = "apikeys"

urlpatterns = [
    path("", api.ApiKeyListView.as_view(), name="key-list"),
    path("<int:pk>/", api.ApiKeyDetailView.as_view(), name="key-detail"),
]

"""/api/kb/: documents and retrieval."""
from django.urls import path

from kb import api
from kb.retrieval.api import RetrieveView

app_name = "kb"

urlpatterns = [
    path("documents/", api.DocumentListView.as_view(), name="document-list"),
    path("documents/archive/", api.DocumentArchiveView.as_view(), name="document-archive"),
    path("documents/<int:pk>/", api.DocumentDetailView.as_view(), name="document-detail"),
    path("retrieve/", RetrieveView.as_view(), name="retrieve"),
]

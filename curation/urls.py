"""/api/kb/qa-pairs/ and /api/kb/chunks/."""
from django.urls import path

from curation import api

app_name = "curation"

urlpatterns = [
    path("qa-pairs/", api.QaPairListView.as_view(), name="qa-pair-list"),
    path("qa-pairs/import/", api.QaPairImportView.as_view(), name="qa-pair-import"),
    path("qa-pairs/<int:pk>/", api.QaPairDetailView.as_view(), name="qa-pair-detail"),
    path("chunks/<int:pk>/", api.ChunkDetailView.as_view(), name="chunk-detail"),
    path("chunks/<int:pk>/revisions/", api.ChunkRevisionsView.as_view(), name="chunk-revisions"),
    path("chunks/<int:pk>/revisions/<int:rev>/restore/", api.ChunkRestoreView.as_view(), name="chunk-restore"),
]

"""/api/kbs/: knowledge bases and their grants."""
from django.urls import path

from kb import kbs_api

app_name = "kbs"

urlpatterns = [
    path("", kbs_api.KnowledgeBaseListView.as_view(), name="kb-list"),
    path("<int:pk>/", kbs_api.KnowledgeBaseDetailView.as_view(), name="kb-detail"),
    path("<int:pk>/grants/", kbs_api.KnowledgeBaseGrantsView.as_view(), name="kb-grants"),
    path("<int:pk>/grants/<int:grant_id>/", kbs_api.KnowledgeBaseGrantView.as_view(), name="kb-grant"),
]

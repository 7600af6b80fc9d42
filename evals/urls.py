"""/api/eval/: evaluation sets and runs."""
from django.urls import path

from evals import api

app_name = "evals-api"

urlpatterns = [
    path("sets/", api.SetListView.as_view(), name="set-list"),
    path("sets/template/", api.TemplateView.as_view(), name="set-template"),
    path("sets/<int:pk>/", api.SetDetailView.as_view(), name="set-detail"),
    path("sets/<int:pk>/items/", api.SetItemsView.as_view(), name="set-items"),
    path("sets/<int:pk>/items/<int:item_id>/", api.SetItemView.as_view(), name="set-item"),
    path("items/from-answer/", api.ItemFromAnswerView.as_view(), name="item-from-answer"),
    path("runs/", api.RunListView.as_view(), name="run-list"),
    path("runs/<int:pk>/", api.RunDetailView.as_view(), name="run-detail"),
    path("runs/<int:pk>/cancel/", api.RunCancelView.as_view(), name="run-cancel"),
]

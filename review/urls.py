"""/api/reviews/."""
from django.urls import path

from review import api

app_name = "review"

urlpatterns = [
    path("", api.ReviewListView.as_view(), name="review-list"),
    path("<int:pk>/add-to-eval/", api.ReviewToEvalView.as_view(), name="review-add-to-eval"),
    path("<int:pk>/resolve/", api.ReviewResolveView.as_view(), name="review-resolve"),
]

"""/eval/: the evaluation staff pages."""
from django.urls import path

from evals import views

app_name = "evals"

urlpatterns = [
    path("", views.index, name="index"),
    path("sets/<int:pk>/", views.set_detail, name="set"),
    path("runs/<int:pk>/", views.run_detail, name="run"),
    path("compare/", views.compare, name="compare"),
]

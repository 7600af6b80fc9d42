from django.urls import path

from sso import api

urlpatterns = [
    path("me/sessions/", api.MySessionsView.as_view(), name="api-my-sessions"),
    path("me/sessions/<int:pk>/", api.MySessionView.as_view(), name="api-my-session"),
    path("users/<int:pk>/sessions/", api.UserSessionsView.as_view(), name="api-user-sessions"),
]

"""Sign-in with the identity provider, and the session pages."""
from django.urls import path

from sso import oidc, views

urlpatterns = [
    path("oidc/authenticate/", oidc.SignInStartView.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", oidc.SignInCallbackView.as_view(), name="oidc_authentication_callback"),
    path("account/sessions/", views.sessions_page, name="account-sessions"),
    path("account/sessions/<int:pk>/end/", views.session_end_view, name="account-session-end"),
]

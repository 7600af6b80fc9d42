"""Sign-in with the identity provider, and the session pages."""
from django.urls import path

from sso import oidc, views

urlpatterns = [
    path("oidc/authenticate/", oidc.SignInStartView.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", oidc.SignInCallbackView.as_view(), name="oidc_authentication_callback"),
    path("account/sessions/", views.sessions_page, name="account-sessions"),
    path("account/password/", views.PasswordChangeView.as_view(), name="password_change"),
    path("account/password/done/", views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("account/sessions/<int:pk>/end/", views.session_end_view, name="account-session-end"),
]

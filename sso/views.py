"""Pages: sign-in (with the identity provider's button), sign-out (ending the provider's session too), sessions."""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseRedirect
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from sso.forms import SignInForm
from sso.oidc import provider_logout_url, signed_in_with_oidc
from sso.sessions import session_end, sessions_of


class SignInView(auth_views.LoginView):
    template_name = "registration/login.html"
    authentication_form = SignInForm
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        config = settings.DOCMIND_OIDC
        context["oidc_enabled"] = config is not None
        context["oidc_label"] = config.button_label if config is not None else ""
        context["oidc_failed"] = self.request.GET.get("sso") == "failed"
        return context


class SignOutView(auth_views.LogoutView):
    """Django's sign-out; a user who came through the identity provider is sent on to end that session too."""

    def post(self, request, *args, **kwargs):
        provider_url = None
        if settings.DOCMIND_OIDC is not None and request.user.is_authenticated and signed_in_with_oidc(request):
            provider_url = provider_logout_url(request)  # before the session (and its id token) is gone
        response = super().post(request, *args, **kwargs)
        return HttpResponseRedirect(provider_url) if provider_url else response


class PasswordChangeView(auth_views.PasswordChangeView):
    """A local account's own password change; the password policy (DOCMIND_PASSWORD_*) applies. Django keeps
    this session signed in and signs the account's other sessions out."""

    template_name = "sso/password_change.html"


class PasswordChangeDoneView(auth_views.PasswordChangeDoneView):
    template_name = "sso/password_change_done.html"


@login_required
def sessions_page(request):
    rows = sessions_of(user=request.user)
    return render(request, "sso/sessions.html", {"sessions": rows, "current_key": request.session.session_key})


@login_required
@require_POST
def session_end_view(request, pk: int):
    session_end(user=request.user, session_id=pk)
    return redirect("account-sessions")

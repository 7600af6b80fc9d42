"""Sign-in forms that tell a refused password from a directory that could not be asked."""
from __future__ import annotations

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.utils.translation import gettext_lazy as _

from docmind.signin import directory_unavailable

DIRECTORY_UNAVAILABLE = _("The directory is unavailable, so directory accounts cannot sign in right now. "
                          "Local accounts still can.")


class _DirectoryAware:
    """Mixes into Django's authentication forms: one more error for a sign-in the directory could not answer."""

    @property
    def directory_unavailable(self) -> bool:
        return directory_unavailable(self.request)

    def get_invalid_login_error(self) -> forms.ValidationError:
        if directory_unavailable(self.request):
            return forms.ValidationError(DIRECTORY_UNAVAILABLE, code="directory_unavailable")
        return super().get_invalid_login_error()


class SignInForm(_DirectoryAware, AuthenticationForm):
    pass


class AdminSignInForm(_DirectoryAware, AdminAuthenticationForm):
    pass

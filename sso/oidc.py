"""OpenID Connect sign-in: mozilla-django-oidc's code flow (with PKCE), matched to users by subject, not by mail."""
from __future__ import annotations

import logging
import re
from urllib.parse import urlencode

import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.http import Http404, HttpRequest
from django.urls import reverse
from mozilla_django_oidc import views as oidc_views
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from sso.models import ExternalIdentity, Provider
from sso.services import IdentityConflict, identity_link, user_apply_external_groups

logger = logging.getLogger(__name__)

_USERNAME_UNSAFE = re.compile(r"[^\w.@+-]")


def _subject(sub: str) -> str:
    """The identity's key: the issuer (when configured) and the provider's `sub`, unique per provider."""
    issuer = settings.DOCMIND_OIDC.issuer
    return f"{issuer} {sub}" if issuer else sub


class OidcBackend(OIDCAuthenticationBackend):
    """Users come from the provider's `sub` claim; a new subject gets a new DocMind user.

    The library's default matches users by e-mail, which would let anyone whose provider account shows the
    local admin's address sign in as the admin; here only a linked identity signs in as a user.
    """

    def authenticate(self, request, **kwargs):
        if request is None or "code" not in request.GET:
            return None
        try:
            user = super().authenticate(request, **kwargs)
        except requests.RequestException as exc:
            # The provider is down or answered with an error: the sign-in fails, the page says so.
            logger.warning("OpenID Connect provider error: %s", exc)
            return None
        if user is not None and not user.is_active:
            return None
        return user

    def verify_claims(self, claims) -> bool:
        return bool(claims.get("sub"))

    def filter_users_by_claims(self, claims):
        return get_user_model().objects.filter(
            external_identities__provider=Provider.OIDC, external_identities__subject=_subject(claims["sub"]))

    def create_user(self, claims):
        config = settings.DOCMIND_OIDC
        wanted = str(claims.get(config.username_claim) or claims.get("email") or claims["sub"])
        base = _USERNAME_UNSAFE.sub("-", wanted)[:140] or "user"
        model = get_user_model()
        with transaction.atomic():
            username, n = base, 1
            # A name already taken (a local account, another provider's user) is never reused: it gets a suffix.
            while model.objects.filter(username__iexact=username).exists():
                n += 1
                username = f"{base}-{n}"
            user = model(username=username)
            user.set_unusable_password()
            self._fill(user, claims)
            user.save()
            try:
                identity_link(user=user, provider=Provider.OIDC, subject=_subject(claims["sub"]))
            except IdentityConflict as exc:
                raise SuspiciousOperation(str(exc)) from exc
        self._apply_groups(user, claims)
        return user

    def update_user(self, user, claims):
        self._fill(user, claims)
        user.save(update_fields=["first_name", "last_name", "email"])
        identity_link(user=user, provider=Provider.OIDC, subject=_subject(claims["sub"]))
        self._apply_groups(user, claims)
        return user

    @staticmethod
    def _fill(user, claims) -> None:
        user.first_name = str(claims.get("given_name") or "")[:150]
        user.last_name = str(claims.get("family_name") or "")[:150]
        user.email = str(claims.get("email") or "")[:254]

    @staticmethod
    def _apply_groups(user, claims) -> None:
        config = settings.DOCMIND_OIDC
        raw = claims.get(config.groups_claim) or []
        groups = {str(g) for g in raw} if isinstance(raw, list) else {str(raw)}
        user_apply_external_groups(user=user, provider=Provider.OIDC, groups=groups, mapping=config.mapping)


def provider_logout_url(request: HttpRequest) -> str:
    """Where signing out sends the browser: the provider's end-session endpoint (so the provider session ends
    too) when one is configured, else DocMind's login page."""
    config = settings.DOCMIND_OIDC
    back = request.build_absolute_uri(reverse("login"))
    if config is None or not config.end_session_endpoint:
        return back
    params = {"post_logout_redirect_uri": back, "client_id": config.client_id}
    id_token = request.session.get("oidc_id_token")
    if id_token:
        params["id_token_hint"] = id_token
    return f"{config.end_session_endpoint}?{urlencode(params)}"


def signed_in_with_oidc(request: HttpRequest) -> bool:
    return request.session.get("_auth_user_backend") == "sso.oidc.OidcBackend" and \
        ExternalIdentity.objects.filter(user_id=request.user.pk, provider=Provider.OIDC).exists()


class _OnlyWhenConfigured:
    """The library's views read their settings when built: without a provider they answer 404, not 500."""

    def __init__(self, *args, **kwargs) -> None:
        if settings.DOCMIND_OIDC is not None:
            super().__init__(*args, **kwargs)

    def dispatch(self, request, *args, **kwargs):
        if settings.DOCMIND_OIDC is None:
            raise Http404("OpenID Connect sign-in is not configured")
        return super().dispatch(request, *args, **kwargs)


class SignInStartView(_OnlyWhenConfigured, oidc_views.OIDCAuthenticationRequestView):
    pass


class SignInCallbackView(_OnlyWhenConfigured, oidc_views.OIDCAuthenticationCallbackView):
    pass

"""Reads the directory and identity-provider settings from the environment (imported by project.settings).

Nothing here touches the database or a network: a malformed variable stops start-up naming the variable,
as every other DocMind setting does.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import ldap
from django_auth_ldap.config import GroupOfNamesType, LDAPSearch

from docmind.env import EnvError, env_bool, env_int, env_str

# docmind.roles' names, repeated because settings cannot import a module that imports the auth models
# (tests/sso/test_config.py keeps the two equal). A user in several mapped groups gets the strongest role.
ADMIN, KB_EDITOR, MEMBER = "admin", "kb_editor", "member"
ROLES = (ADMIN, KB_EDITOR, MEMBER)
ROLE_RANK = {MEMBER: 0, KB_EDITOR: 1, ADMIN: 2}
# Access levels a mapping may name: kb.models.KbAccess's values (tests/sso/test_config.py keeps them equal).
GRANT_LEVELS = ("view", "read", "edit")


@dataclass(frozen=True)
class KbRule:
    kb: str  # the knowledge base's name
    access: str


@dataclass(frozen=True)
class GroupMapping:
    """External group (an LDAP group DN, an OIDC groups-claim value) → DocMind role and knowledge-base grants."""

    roles: dict[str, str] = field(default_factory=dict)
    kbs: dict[str, tuple[KbRule, ...]] = field(default_factory=dict)
    default_role: str = MEMBER
    # Whether group names compare case-insensitively (LDAP DNs do; OIDC group names need not).
    fold_case: bool = False

    def key(self, group: str) -> str:
        return normalize_dn(group) if self.fold_case else group.strip()

    def role_for(self, groups: set[str]) -> str:
        keys = {self.key(g) for g in groups}
        mapped = [role for group, role in self.roles.items() if group in keys]
        return max(mapped, key=ROLE_RANK.__getitem__, default=self.default_role)

    def mapped_groups(self, groups: set[str]) -> set[str]:
        """The user's groups that carry grants (normalised as the mapping's keys are)."""
        return {self.key(g) for g in groups} & set(self.kbs)


@dataclass(frozen=True)
class LdapConfig:
    uri: str
    bind_dn: str
    bind_password: str
    user_base: str
    user_filter: str
    group_base: str
    group_filter: str
    require_group: str
    start_tls: bool
    timeout: int
    mapping: GroupMapping


@dataclass(frozen=True)
class OidcConfig:
    issuer: str
    client_id: str
    client_secret: str
    authorization_endpoint: str
    token_endpoint: str
    userinfo_endpoint: str
    jwks_endpoint: str
    end_session_endpoint: str
    sign_algo: str
    scopes: str
    username_claim: str
    groups_claim: str
    button_label: str
    timeout: int
    verify_tls: bool
    mapping: GroupMapping


def normalize_dn(dn: str) -> str:
    """DNs compare case-insensitively and ignore spaces around separators: `CN=Eng, OU=Groups` = `cn=eng,ou=groups`."""
    parts = [p.strip() for p in dn.split(",")]
    return ",".join("=".join(s.strip() for s in p.split("=", 1)) for p in parts).lower()


def _json(name: str) -> object:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise EnvError(name, raw, f"not JSON ({exc.msg})") from None


def group_mapping(prefix: str, *, fold_case: bool) -> GroupMapping:
    """`{prefix}_GROUP_ROLES` (JSON group → role) and `{prefix}_GROUP_KBS` (JSON group → [{kb, access}])."""
    roles_name, kbs_name, default_name = f"{prefix}_GROUP_ROLES", f"{prefix}_GROUP_KBS", f"{prefix}_DEFAULT_ROLE"
    key = normalize_dn if fold_case else str.strip
    raw_roles = _json(roles_name)
    if not isinstance(raw_roles, dict) or not all(isinstance(v, str) and v in ROLES for v in raw_roles.values()):
        raise EnvError(roles_name, os.environ.get(roles_name, ""),
                       f"expected a JSON object of group → one of {', '.join(ROLES)}")
    raw_kbs = _json(kbs_name)
    if not isinstance(raw_kbs, dict):
        raise EnvError(kbs_name, os.environ.get(kbs_name, ""), 'expected a JSON object of group → [{"kb", "access"}]')
    kbs: dict[str, tuple[KbRule, ...]] = {}
    for group, rules in raw_kbs.items():
        if not isinstance(rules, list) or not all(
                isinstance(r, dict) and isinstance(r.get("kb"), str) and r.get("access") in GRANT_LEVELS
                and set(r) <= {"kb", "access"} for r in rules):
            raise EnvError(kbs_name, os.environ.get(kbs_name, ""),
                           f'group {group!r}: expected a list of {{"kb": name, "access": {"|".join(GRANT_LEVELS)}}}')
        kbs[key(group)] = tuple(KbRule(kb=r["kb"].strip(), access=r["access"]) for r in rules)
    default_role = env_str(default_name, MEMBER)
    if default_role not in ROLES:
        raise EnvError(default_name, default_role, f"expected one of {', '.join(ROLES)}")
    return GroupMapping(roles={key(g): r for g, r in raw_roles.items()}, kbs=kbs, default_role=default_role,
                        fold_case=fold_case)


def ldap_from_env() -> LdapConfig | None:
    """The directory, or None when `DOCMIND_LDAP_URI` is unset (directory sign-in off)."""
    uri = env_str("DOCMIND_LDAP_URI")
    if not uri:
        return None
    if not uri.startswith(("ldap://", "ldaps://", "ldapi://")):
        raise EnvError("DOCMIND_LDAP_URI", uri, "expected ldap://, ldaps:// or ldapi:// URIs")
    user_base = env_str("DOCMIND_LDAP_USER_BASE")
    if not user_base:
        raise EnvError("DOCMIND_LDAP_USER_BASE", "", "required when DOCMIND_LDAP_URI is set")
    user_filter = env_str("DOCMIND_LDAP_USER_FILTER", "(uid=%(user)s)")
    if "%(user)s" not in user_filter:
        raise EnvError("DOCMIND_LDAP_USER_FILTER", user_filter, "must contain %(user)s")
    return LdapConfig(
        uri=uri,
        bind_dn=env_str("DOCMIND_LDAP_BIND_DN"),
        # Not stripped: a password may end in a space.
        bind_password=os.environ.get("DOCMIND_LDAP_BIND_PASSWORD", ""),
        user_base=user_base,
        user_filter=user_filter,
        group_base=env_str("DOCMIND_LDAP_GROUP_BASE"),
        group_filter=env_str("DOCMIND_LDAP_GROUP_FILTER", "(objectClass=groupOfNames)"),
        require_group=env_str("DOCMIND_LDAP_REQUIRE_GROUP"),
        start_tls=env_bool("DOCMIND_LDAP_START_TLS", False),
        timeout=env_int("DOCMIND_LDAP_TIMEOUT", 5, minimum=1),
        mapping=group_mapping("DOCMIND_LDAP", fold_case=True),
    )


def ldap_settings(config: LdapConfig | None) -> dict:
    """django-auth-ldap's AUTH_LDAP_* settings for `config` (empty when the directory is off)."""
    if config is None:
        return {}

    values = {
        "AUTH_LDAP_SERVER_URI": config.uri,
        "AUTH_LDAP_BIND_DN": config.bind_dn,
        "AUTH_LDAP_BIND_PASSWORD": config.bind_password,
        "AUTH_LDAP_START_TLS": config.start_tls,
        "AUTH_LDAP_USER_SEARCH": LDAPSearch(config.user_base, ldap.SCOPE_SUBTREE, config.user_filter),
        "AUTH_LDAP_USER_ATTR_MAP": {"first_name": "givenName", "last_name": "sn", "email": "mail"},
        # Name and mail follow the directory at every sign-in, as roles and grants do.
        "AUTH_LDAP_ALWAYS_UPDATE_USER": True,
        # A directory that is down or hung costs a sign-in at most this long (connect, then each operation).
        "AUTH_LDAP_CONNECTION_OPTIONS": {ldap.OPT_NETWORK_TIMEOUT: config.timeout, ldap.OPT_TIMEOUT: config.timeout,
                                         ldap.OPT_REFERRALS: 0},
    }
    if config.group_base:
        values["AUTH_LDAP_GROUP_SEARCH"] = LDAPSearch(config.group_base, ldap.SCOPE_SUBTREE, config.group_filter)
        values["AUTH_LDAP_GROUP_TYPE"] = GroupOfNamesType()
    if config.require_group:
        values["AUTH_LDAP_REQUIRE_GROUP"] = config.require_group
    return values


def oidc_from_env() -> OidcConfig | None:
    """The identity provider, or None when `DOCMIND_OIDC_CLIENT_ID` is unset (OpenID Connect sign-in off)."""
    client_id = env_str("DOCMIND_OIDC_CLIENT_ID")
    if not client_id:
        return None
    issuer = env_str("DOCMIND_OIDC_ISSUER").rstrip("/")

    def endpoint(name: str) -> str:
        # Named one by one, not discovered: settings never wait on the network, and a provider's paths differ.
        value = env_str(f"DOCMIND_OIDC_{name}")
        if not value.startswith(("https://", "http://")):
            raise EnvError(f"DOCMIND_OIDC_{name}", value, "required when DOCMIND_OIDC_CLIENT_ID is set (a URL)")
        return value

    end_session = env_str("DOCMIND_OIDC_END_SESSION_ENDPOINT")
    if end_session and not end_session.startswith(("https://", "http://")):
        raise EnvError("DOCMIND_OIDC_END_SESSION_ENDPOINT", end_session, "expected a URL")
    return OidcConfig(
        issuer=issuer,
        client_id=client_id,
        client_secret=os.environ.get("DOCMIND_OIDC_CLIENT_SECRET", ""),
        authorization_endpoint=endpoint("AUTHORIZATION_ENDPOINT"),
        token_endpoint=endpoint("TOKEN_ENDPOINT"),
        userinfo_endpoint=endpoint("USERINFO_ENDPOINT"),
        jwks_endpoint=endpoint("JWKS_ENDPOINT"),
        end_session_endpoint=end_session,
        sign_algo=env_str("DOCMIND_OIDC_SIGN_ALGO", "RS256"),
        scopes=env_str("DOCMIND_OIDC_SCOPES", "openid email profile"),
        username_claim=env_str("DOCMIND_OIDC_USERNAME_CLAIM", "preferred_username"),
        groups_claim=env_str("DOCMIND_OIDC_GROUPS_CLAIM", "groups"),
        button_label=env_str("DOCMIND_OIDC_BUTTON_LABEL"),
        timeout=env_int("DOCMIND_OIDC_TIMEOUT", 5, minimum=1),
        verify_tls=env_bool("DOCMIND_OIDC_VERIFY_TLS", True),
        mapping=group_mapping("DOCMIND_OIDC", fold_case=False),
    )


def oidc_settings(config: OidcConfig | None) -> dict:
    """mozilla-django-oidc's OIDC_* settings for `config` (empty when OpenID Connect is off)."""
    if config is None:
        return {}
    return {
        "OIDC_RP_CLIENT_ID": config.client_id,
        "OIDC_RP_CLIENT_SECRET": config.client_secret,
        "OIDC_OP_AUTHORIZATION_ENDPOINT": config.authorization_endpoint,
        "OIDC_OP_TOKEN_ENDPOINT": config.token_endpoint,
        "OIDC_OP_USER_ENDPOINT": config.userinfo_endpoint,
        "OIDC_OP_JWKS_ENDPOINT": config.jwks_endpoint,
        "OIDC_RP_SIGN_ALGO": config.sign_algo,
        "OIDC_RP_SCOPES": config.scopes,
        # Authorization-code flow with PKCE (S256): a stolen code is useless without this session's verifier.
        "OIDC_USE_PKCE": True,
        "OIDC_PKCE_CODE_CHALLENGE_METHOD": "S256",
        "OIDC_USE_NONCE": True,
        "OIDC_TIMEOUT": config.timeout,
        "OIDC_VERIFY_SSL": config.verify_tls,
        # Kept in the session for the provider's logout (id_token_hint).
        "OIDC_STORE_ID_TOKEN": True,
        "OIDC_OP_LOGOUT_URL_METHOD": "sso.oidc.provider_logout_url",
        "OIDC_AUTHENTICATION_CALLBACK_URL": "oidc_authentication_callback",
        "LOGIN_REDIRECT_URL_FAILURE": "/login/?sso=failed",
    }


def password_validators(*, min_length: int, reject_common: bool, reject_numeric: bool, reject_similar: bool) -> list:
    """AUTH_PASSWORD_VALIDATORS for local accounts (DOCMIND_PASSWORD_*): every password set through DocMind's
    forms, the admin and `createsuperuser` must pass them."""
    base = "django.contrib.auth.password_validation."
    chosen = [{"NAME": base + "MinimumLengthValidator", "OPTIONS": {"min_length": min_length}}]
    for wanted, name in ((reject_common, "CommonPasswordValidator"), (reject_numeric, "NumericPasswordValidator"),
                         (reject_similar, "UserAttributeSimilarityValidator")):
        if wanted:
            chosen.append({"NAME": base + name})
    return chosen

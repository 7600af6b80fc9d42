"""Writes for external sign-in: link an account, and apply a user's external groups as roles and grants."""
from __future__ import annotations

import hashlib
import logging

from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction
from django.utils import timezone

from docmind.roles import user_set_role
from kb.models import KbAccess, KbGrant, KnowledgeBase
from kb.services import kb_grant, kb_revoke
from sso.config import GroupMapping, KbRule
from sso.models import ExternalIdentity

logger = logging.getLogger(__name__)

class IdentityConflict(Exception):
    """The external account would take over a DocMind account that is not linked to it."""


def identity_link(*, user: AbstractBaseUser, provider: str, subject: str) -> ExternalIdentity:
    """Record that `user` is `subject` at `provider`; refuse when either is already linked elsewhere."""
    with transaction.atomic():
        identity = ExternalIdentity.objects.select_for_update().filter(provider=provider, subject=subject).first()
        if identity is None:
            if ExternalIdentity.objects.filter(user=user, provider=provider).exists():
                raise IdentityConflict(f"{user} is already linked to another {provider} account")
            identity = ExternalIdentity.objects.create(user=user, provider=provider, subject=subject)
        elif identity.user_id != user.pk:
            raise IdentityConflict(f"{provider} account {subject!r} belongs to another user")
        identity.last_login_at = timezone.now()
        identity.save(update_fields=["last_login_at"])
    return identity


def is_linked(*, user: AbstractBaseUser, provider: str) -> bool:
    return ExternalIdentity.objects.filter(user=user, provider=provider).exists()


def external_group_name(provider: str, key: str) -> str:
    """The Django group standing for an external group: readable, within Group.name's 150 characters."""
    name = f"{provider}:{key}"
    if len(name) <= 150:
        return name
    return f"{name[:128]}~{hashlib.sha256(key.encode()).hexdigest()[:20]}"


def user_apply_external_groups(*, user: AbstractBaseUser, provider: str, groups: set[str],
                               mapping: GroupMapping) -> str:
    """Set the user's role and external-group memberships from the groups the provider reports.

    The provider is the source of truth at every sign-in: a role or group given by hand is replaced, and a user
    who left a group loses what it granted. Returns the role applied.
    """
    role = mapping.role_for(groups)
    with transaction.atomic():
        user_set_role(user=user, role=role)  # leaves the user in exactly the role group
        wanted = [_external_group(provider, key, mapping.kbs[key]) for key in sorted(mapping.mapped_groups(groups))]
        if wanted:
            user.groups.add(*wanted)
    return role


def _external_group(provider: str, key: str, rules: tuple[KbRule, ...]) -> Group:
    """The Django group for one external group, its knowledge-base grants made to match the configuration."""
    group, _created = Group.objects.get_or_create(name=external_group_name(provider, key))
    wanted: dict[int, str] = {}
    for rule in rules:
        kb = KnowledgeBase.objects.filter(name=rule.kb).first()
        if kb is None:
            logger.warning("group %s maps to knowledge base %r, which does not exist", key, rule.kb)
            continue
        wanted[kb.pk] = KbAccess(rule.access).value
    existing = dict(KbGrant.objects.filter(group=group).values_list("kb_id", "access"))
    # Only changes go through the grant services: each one invalidates cached answers, so an unchanged
    # configuration costs a sign-in nothing.
    for kb_id, access in wanted.items():
        if existing.get(kb_id) != access:
            kb_grant(kb=KnowledgeBase.objects.get(pk=kb_id), access=access, group=group)
    for kb_id in set(existing) - set(wanted):
        kb_revoke(kb=KnowledgeBase.objects.get(pk=kb_id), group=group)
    return group

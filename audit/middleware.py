"""Who did it, for every audit entry a request causes.

django-auditlog's middleware reads `request.user` when the request arrives, which is anonymous for an API
call: DRF authenticates a token only in the view. The actor is read lazily here instead, when an entry is
written (DRF has set `request.user` by then), and the client address is the one lockout uses (trusted
proxies only), not a forwarded header anyone can write."""
from __future__ import annotations

from collections.abc import Callable

from auditlog.cid import set_cid
from auditlog.context import set_extra_data
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.utils.functional import SimpleLazyObject

from docmind.lockout import client_ip


def audit_actor_middleware(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable:
    def middleware(request: HttpRequest) -> HttpResponse:
        def actor():
            user = getattr(request, "user", None)
            return user if isinstance(user, get_user_model()) and user.is_authenticated else None

        set_cid(request)
        with set_extra_data(context_data={"actor": SimpleLazyObject(actor), "remote_addr": client_ip(request),
                                          "remote_port": None}):
            return get_response(request)

    return middleware

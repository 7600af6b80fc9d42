"""The embeddable chat widget: a frame that only listed origins may embed, asking with an ask-only key.

The flow: the intranet page loads `static/apikeys/widget.js` with the key in `data-key`; the script opens
`/widget/frame/?key=…` in an iframe. The frame is served only when the key is a usable widget key and the
embedding page's origin (the Referer a browser sends for the iframe) is listed; its Content-Security-Policy
`frame-ancestors` names the listed origins, so a browser refuses to show it inside any other page. The
frame asks `POST /api/chat/` with the key and a signed ticket naming the key and the origin it was served
to; a widget key without a valid ticket is refused everywhere (REST, SSE, MCP).

The trade-off: a key in a public page is visible to anyone who opens the page, and a script outside a
browser can send any Referer. So the checks above stop other web pages from embedding the widget, not a
determined caller; what bounds that caller is what the key can do: ask (never list, retrieve or download)
the bases it names, within its creator's concurrency share, until it expires or is revoked.
"""
from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.http import require_GET

from apikeys import services
from apikeys.models import KeyScope
from apikeys.tickets import is_widget_key, ticket_for


def _referer_origin(request: HttpRequest) -> str | None:
    referer = request.META.get("HTTP_REFERER", "")
    if not referer:
        return None
    parts = urlsplit(referer)
    try:
        return services.normalise_origin(f"{parts.scheme}://{parts.netloc}")
    except ValueError:
        return None


def _refused(request: HttpRequest, status: int) -> HttpResponse:
    # One page for an unknown key and a known one: nothing says which knowledge bases exist.
    message = (_("This chat is not available.") if status == 404
               else _("This page is not allowed to embed this chat."))
    return render(request, "apikeys/widget_refused.html", {"message": message}, status=status)


@require_GET
@xframe_options_exempt  # frame-ancestors below says who may frame it; X-Frame-Options cannot list origins
def widget_frame(request: HttpRequest) -> HttpResponse:
    try:
        key = services.key_lookup(request.GET.get("key", ""))
    except services.KeyInvalid:
        key = None
    if key is None or key.scope != KeyScope.ASK or not is_widget_key(key):
        return _refused(request, 404)
    origin = _referer_origin(request)
    if origin is None or origin not in key.allowed_origins:
        response = _refused(request, 403)
        response._csp_config = {**settings.SECURE_CSP, "frame-ancestors": list(key.allowed_origins)}
        return response
    response = render(request, "apikeys/widget_frame.html", {
        "key": request.GET["key"], "ticket": ticket_for(key, origin), "title": key.name,
    })
    response._csp_config = {**settings.SECURE_CSP, "frame-ancestors": list(key.allowed_origins)}
    response["Cache-Control"] = "no-store"
    response["Referrer-Policy"] = "no-referrer"  # the frame's URL holds the key: never pass it on
    return response

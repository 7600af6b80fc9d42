"""The chat page: server-rendered shell; chat.js streams answers over the WebSocket."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from chat import selectors
from config_admin.conf import ai_config
from kb import selectors as kb_selectors
from kb.access import askable_kbs, is_kb_editor, readable_kb_ids


@login_required
@ensure_csrf_cookie  # chat.js sends the cookie's token on PATCH/DELETE of conversations
def chat_page(request: HttpRequest) -> HttpResponse:
    # Documents to pick for "read this one" come from bases whose originals the user reads; the bases to ask
    # include view-only ones.
    kb_ids = readable_kb_ids(request.user)
    return render(request, "chat/page.html", {
        "conversations": selectors.conversation_list(user=request.user)[:200],
        "documents": kb_selectors.ready_documents(kb_ids=kb_ids),
        "kbs": [{"id": kb.pk, "name": kb.name} for kb in askable_kbs(request.user)],
        "max_chars": ai_config.get("chat.max_message_chars"),
        # "Add to evaluation set" on answers: evaluation sets are for the editors of a base.
        "can_evaluate": is_kb_editor(request.user),
    })

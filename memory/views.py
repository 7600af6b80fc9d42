"""The "我的记忆 / My memories" page: a server-rendered shell; memories.js works over /api/memories/."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from memory.models import MemoryType


@login_required
@ensure_csrf_cookie  # memories.js sends the cookie's token on POST / PATCH / DELETE
def memories_page(request: HttpRequest) -> HttpResponse:
    return render(request, "memory/page.html", {"types": MemoryType.choices})

"""The admin's token usage page: daily totals per user and model tier, priced where prices exist."""
from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from chat import services
from chat.models import Message, MessageUsage

pytestmark = pytest.mark.django_db


def _answer(user):
    conversation = services.conversation_start(user=user, question="q")
    return services.message_add_answer(conversation=conversation, content="a")


def test_usage_rows_are_priced_per_model_and_tiered(member):
    message = _answer(member)
    rows = services.message_usage_record(
        message=message, user=member, tiers={"qwen-plus": "main"},
        prices={"qwen-plus": {"input": 0.002, "output": 0.006}},
        usage=[{"model": "qwen-plus", "input_tokens": 500, "output_tokens": 100, "calls": 1, "estimated": False},
               {"model": "other-model", "input_tokens": 10, "output_tokens": 1, "calls": 2, "estimated": True}])
    by_model = {r.model: r for r in rows}
    assert by_model["qwen-plus"].cost == Decimal("0.0016") and by_model["qwen-plus"].tier == "main"
    assert by_model["other-model"].cost is None and by_model["other-model"].tier == "other"
    assert by_model["qwen-plus"].day == timezone.localdate()


def test_the_admin_page_shows_daily_totals_per_user_and_tier(client, admin_user, member, other_member):
    for user, tokens in ((member, 100), (member, 50), (other_member, 7)):
        services.message_usage_record(
            message=_answer(user), user=user, tiers={"m": "main"}, prices={"m": 0.01},
            usage=[{"model": "m", "input_tokens": tokens, "output_tokens": 1, "calls": 1, "estimated": False}])
    old = MessageUsage.objects.filter(user=other_member).update(day=timezone.localdate() - timedelta(days=40))
    assert old == 1
    client.force_login(admin_user)

    page = client.get("/admin/chat/messageusage/")
    assert page.status_code == 200
    rows = page.context["rows"]
    assert [(r["user__username"], r["tier"], r["input_tokens"], r["messages"]) for r in rows] == [
        (member.username, "main", 150, 2)]
    assert rows[0]["cost"] == Decimal("0.00152")  # (150 + 2) tokens at 0.01 per 1k
    assert member.username in page.content.decode()
    older = client.get("/admin/chat/messageusage/?days=90").context["rows"]
    assert {r["user__username"] for r in older} == {member.username, other_member.username}


def test_members_cannot_open_the_usage_page(client, member):
    client.force_login(member)
    assert client.get("/admin/chat/messageusage/").status_code in (302, 403)
    assert Message.objects.count() == 0

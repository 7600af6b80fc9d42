"""Dates are stored in UTC and shown in the browser's time zone, which its cookie names."""
from __future__ import annotations

import datetime as dt
import re
import zoneinfo

import pytest
from django.test import Client

from docmind.timezones import TIMEZONE_COOKIE, zone_from_cookie

UTC_NOON = dt.datetime(2026, 1, 15, 12, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize("value", ["", "Nowhere/City", "../../etc/passwd", "Europe/" + "x" * 80, "Europe/Berlin\x00"])
def test_a_cookie_naming_no_zone_is_ignored(value):
    assert zone_from_cookie(value) is None


def test_a_cookie_naming_a_zone_gives_it():
    assert zone_from_cookie("America/New_York") == zoneinfo.ZoneInfo("America/New_York")


def _admin_page(admin_user, path: str, zone: str | None) -> str:
    client = Client()
    client.force_login(admin_user)
    if zone is not None:
        client.cookies[TIMEZONE_COOKIE] = zone
    return client.get(path, HTTP_ACCEPT_LANGUAGE="en").content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("zone", ["America/New_York", "Europe/Berlin", "Asia/Kolkata"])
def test_the_admin_runs_in_the_browsers_zone_so_it_warns_of_no_offset(admin_user, zone):
    # The admin's date widgets compare this offset with the browser's own and warn on a difference.
    page = _admin_page(admin_user, "/admin/", zone)
    offset = int(re.search(r'data-admin-utc-offset="(-?\d+)"', page).group(1))
    assert offset == int(dt.datetime.now(zoneinfo.ZoneInfo(zone)).utcoffset().total_seconds())


@pytest.mark.django_db
def test_without_the_cookie_the_admin_runs_in_the_servers_zone(admin_user, settings):
    page = _admin_page(admin_user, "/admin/", None)
    offset = int(re.search(r'data-admin-utc-offset="(-?\d+)"', page).group(1))
    assert offset == int(dt.datetime.now(zoneinfo.ZoneInfo(settings.TIME_ZONE)).utcoffset().total_seconds())


@pytest.mark.django_db
def test_a_stored_time_is_shown_in_the_browsers_zone(admin_user):
    from chat.models import Conversation

    conversation = Conversation.objects.create(user=admin_user, title="zones")
    Conversation.objects.filter(pk=conversation.pk).update(updated_at=UTC_NOON)
    assert Conversation.objects.get(pk=conversation.pk).updated_at == UTC_NOON  # stored as given, in UTC
    new_york = _admin_page(admin_user, "/admin/chat/conversation/", "America/New_York")
    shanghai = _admin_page(admin_user, "/admin/chat/conversation/", "Asia/Shanghai")
    assert "7 a.m." in new_york and "8 p.m." in shanghai


def test_every_page_and_the_admin_load_the_zone_script():
    from django.template.loader import get_template

    for name in ("base.html", "admin/base_site.html"):
        assert "docmind/timezone.js" in get_template(name).template.source

"""The real MariaDB and Redis backends, when DATABASE_URL / REDIS_URL name them (CI sets both)."""
import os

import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import require_services


def _skip_or_fail(reason: str):
    if require_services():
        pytest.fail(f"{reason}, but DOCMIND_REQUIRE_SERVICES=1")
    pytest.skip(reason)


@pytest.fixture
def mysql():
    if not os.environ.get("DATABASE_URL", "").startswith(("mysql", "mariadb")):
        if require_services() and os.environ.get("REDIS_URL"):
            pytest.fail("DATABASE_URL must name MariaDB when the services run")
        pytest.skip("DATABASE_URL does not name MySQL/MariaDB")
    return connection


@pytest.fixture
def redis_url():
    url = os.environ.get("REDIS_URL")
    if not url:
        if require_services() and os.environ.get("DATABASE_URL"):
            pytest.fail("REDIS_URL must be set when the services run")
        pytest.skip("REDIS_URL is not set")
    return url


@pytest.mark.django_db
def test_mysql_round_trips_chinese_and_four_byte_characters(mysql, member):
    from memory.models import UserMemory

    text = "支付失败排查 🧾 𠮷野家"
    saved = UserMemory.objects.create(user=member, content=text)
    assert mysql.vendor == "mysql"
    assert UserMemory.objects.get(pk=saved.pk).content == text
    with mysql.cursor() as cursor:
        cursor.execute("SELECT @@character_set_connection")
        assert cursor.fetchone()[0] == "utf8mb4"


def test_redis_url_selects_django_redis_cache_that_round_trips(redis_url):
    from django.core.cache import cache

    assert settings.CACHES["default"]["BACKEND"] == "django_redis.cache.RedisCache"
    cache.set("docmind:test:key", {"中文": 1}, 30)
    assert cache.get("docmind:test:key") == {"中文": 1}
    cache.delete("docmind:test:key")


async def test_redis_url_selects_the_redis_channel_layer(redis_url):
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    assert type(layer).__name__ == "RedisChannelLayer"
    channel = await layer.new_channel()
    await layer.send(channel, {"type": "probe", "text": "你好"})
    assert (await layer.receive(channel))["text"] == "你好"
    await layer.flush()

"""Reads DocMind's environment variables; a malformed value stops start-up naming the variable."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import dj_database_url


class EnvError(RuntimeError):
    """An environment variable has a value DocMind cannot use."""

    def __init__(self, name: str, value: str, reason: str) -> None:
        super().__init__(f"Environment variable {name}={value!r} is invalid: {reason}")
        self.name = name


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise EnvError(name, raw, "expected one of 1/0, true/false, yes/no, on/off")


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise EnvError(name, raw, "expected an integer") from None
    if value < minimum:
        raise EnvError(name, raw, f"must be >= {minimum}")
    return value


def proxy_ssl_header() -> tuple[str, str] | None:
    """DJANGO_SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto: https" → ("HTTP_X_FORWARDED_PROTO", "https").
    Set it only behind a proxy that overwrites that header: a client could send it too."""
    name = "DJANGO_SECURE_PROXY_SSL_HEADER"
    raw = env_str(name)
    if not raw:
        return None
    header, sep, value = raw.partition(":")
    header, value = header.strip(), value.strip()
    if not sep or not header or not value or not all(c.isalnum() or c == "-" for c in header):
        raise EnvError(name, raw, "expected 'Header-Name: value', e.g. 'X-Forwarded-Proto: https'")
    return "HTTP_" + header.upper().replace("-", "_"), value


def origins(name: str) -> list[str]:
    """A comma-separated list of origins such as https://docmind.example.com."""
    raw = env_str(name)
    found = [o.strip() for o in raw.split(",") if o.strip()]
    for origin in found:
        parsed = urlparse(origin)
        if parsed.scheme not in {"http", "https"} or not parsed.hostname or parsed.path not in {"", "/"}:
            raise EnvError(name, raw, f"{origin!r} is not an origin like https://host[:port]")
    return found


def rate(name: str, default: str) -> str:
    """A DRF throttle rate such as 10/minute (periods: second, minute, hour, day)."""
    raw = env_str(name, default)
    count, _, period = raw.partition("/")
    if not count.isdigit() or int(count) < 1 or period[:1] not in {"s", "m", "h", "d"}:
        raise EnvError(name, raw, "expected N/second, N/minute, N/hour or N/day")
    return raw
def available_cores() -> int:
    """CPU cores this process may run on (its affinity mask, e.g. a container's cpuset)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def database_config(data_dir: Path) -> dict:
    """DATABASE_URL → Django DATABASES['default']; unset → SQLite under the data dir."""
    raw = env_str("DATABASE_URL")
    if not raw:
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(data_dir / "docmind.sqlite3"),
            # Ingestion workers write while requests read: wait rather than fail on a lock.
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE",
                        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"},
            # A file, not pytest's default in-memory database: tests start other processes
            # (a second config reader, a live server) that must see the same data.
            "TEST": {"NAME": str(data_dir / "test.sqlite3")},
        }
    scheme = urlparse(raw).scheme
    if scheme not in {"mysql", "mariadb", "sqlite"}:
        raise EnvError("DATABASE_URL", _redact(raw), "scheme must be mysql://, mariadb:// or sqlite://")
    try:
        # No persistent connections: under ASGI every request and every chat turn runs its ORM
        # calls in a thread of its own, so a connection kept for reuse is kept by a thread that
        # never comes back, and MariaDB runs out of connections (Django's docs say the same).
        # MySQL has no pool in Django; connecting costs about a millisecond on loopback.
        config = dj_database_url.parse(raw.replace("mariadb://", "mysql://", 1), conn_max_age=0)
    except Exception as exc:  # dj_database_url raises several types for garbage
        raise EnvError("DATABASE_URL", _redact(raw), str(exc)) from None
    if config["ENGINE"] == "django.db.backends.mysql":
        if not config.get("NAME"):
            raise EnvError("DATABASE_URL", _redact(raw), "the database name is missing")
        _require_mysql_driver(raw)
        config.setdefault("OPTIONS", {})
        # utf8mb4 so that Chinese (and any 4-byte character) round-trips.
        config["OPTIONS"].update({"charset": "utf8mb4", "init_command": "SET sql_mode='STRICT_TRANS_TABLES'"})
        config["TEST"] = {"CHARSET": "utf8mb4", "COLLATION": "utf8mb4_unicode_ci"}
    return config


def _require_mysql_driver(raw: str) -> None:
    """The driver is an optional install (it builds against system headers), so say how to get it."""
    try:
        # optional: the MySQL driver comes from requirements-mysql.txt; settings must load without it
        import MySQLdb  # noqa: F401
    except ImportError:
        raise EnvError("DATABASE_URL", _redact(raw),
                       "it names MySQL but the mysqlclient driver is not installed: run `make install` with this "
                       "DATABASE_URL set (or `pip install -r requirements-mysql.txt`; Debian needs "
                       "`apt-get install libmariadb-dev pkg-config` first)") from None


def redis_url() -> str | None:
    raw = env_str("REDIS_URL")
    if not raw:
        return None
    parsed = urlparse(raw)
    if parsed.scheme not in {"redis", "rediss", "unix"} or (parsed.scheme != "unix" and not parsed.hostname):
        raise EnvError("REDIS_URL", _redact(raw), "expected redis://host:port/db")
    return raw


def cache_config(redis: str | None) -> dict:
    """Django CACHES: Redis when configured, else local memory.

    Every cache use in DocMind is best-effort (answer cache, KB version, throttling), so a Redis
    error reads as a miss and a write is dropped; the error is logged once per outage window by
    the "docmind.cache" logger (see LOGGING) instead of failing the request.
    """
    # Throttles count in `throttle`, which raises on a Redis error, and then in `throttle_local`
    # (docmind.throttling): a throttle must not fail open while Redis is down.
    local = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "docmind-throttle"}
    if not redis:
        return {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "docmind"},
                "throttle": local, "throttle_local": local}
    return {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": redis,
            "KEY_PREFIX": "docmind",
            # Short: during an outage every cache call waits this long before reading as a miss.
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 2, "IGNORE_EXCEPTIONS": True},
        },
        "throttle": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": redis,
            "KEY_PREFIX": "docmind",
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 1, "SOCKET_TIMEOUT": 2, "IGNORE_EXCEPTIONS": False},
        },
        "throttle_local": local,
    }


def milvus_uri(data_dir: Path) -> str:
    raw = env_str("MILVUS_URI")
    if not raw:
        return str(data_dir / "milvus.db")
    parsed = urlparse(raw)
    if parsed.scheme in {"http", "https", "tcp", "grpc"}:
        if not parsed.hostname:
            raise EnvError("MILVUS_URI", raw, "the host is missing")
        return raw
    if raw.endswith(".db"):
        return raw
    raise EnvError("MILVUS_URI", raw, "expected http://host:19530 or a Milvus Lite file ending in .db")


def openai_base_url() -> str | None:
    raw = env_str("OPENAI_BASE_URL")
    if not raw:
        return None
    parsed = urlparse(raw)
    if parsed.scheme not in {"http", "https"} or not parsed.hostname:
        raise EnvError("OPENAI_BASE_URL", raw, "expected an http(s) URL")
    return raw


def allowed_hosts(debug: bool) -> list[str]:
    raw = env_str("DJANGO_ALLOWED_HOSTS")
    if not raw:
        return ["127.0.0.1", "localhost", "[::1]", "testserver"]
    hosts = [h.strip() for h in raw.split(",") if h.strip()]
    if not hosts:
        raise EnvError("DJANGO_ALLOWED_HOSTS", raw, "no host given")
    return hosts


@dataclass(frozen=True)
class ServiceEndpoint:
    """An optional OpenAI-compatible HTTP service (embeddings, rerank, web search)."""

    url: str | None
    api_key: str | None
    model: str

    @property
    def enabled(self) -> bool:
        return bool(self.url)


def service_endpoint(prefix: str, default_model: str = "") -> ServiceEndpoint:
    url = env_str(f"{prefix}_URL") or None
    if url:
        parsed = urlparse(url)
        if parsed.scheme not in {"http", "https"} or not parsed.hostname:
            raise EnvError(f"{prefix}_URL", url, "expected an http(s) URL")
    return ServiceEndpoint(url=url, api_key=env_str(f"{prefix}_API_KEY") or None,
                           model=env_str(f"{prefix}_MODEL", default_model))


def _redact(url: str) -> str:
    parsed = urlparse(url)
    if parsed.password:
        return url.replace(f":{parsed.password}@", ":***@", 1)
    return url

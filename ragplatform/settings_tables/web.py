"""Web and security: the deployment mode, Django's own basics, HTTPS, proxies, login throttling."""

from __future__ import annotations

from ragplatform.settings_tables.rows import Bool, Choice, Folder, Int, List, Secret, Text

ROWS = (
    Choice(
        "RAG_ENV",
        ("development", "production"),
        "Production refuses unsafe settings and turns on secure cookies, HSTS and WhiteNoise.",
    ),
    Folder(
        "RAG_DATA_DIR",
        ".data",
        "The data folder: embedded database, secret key, files.",
        setting="DATA_DIR",
    ),
    Folder(
        "RAG_STATIC_ROOT",
        "{RAG_DATA_DIR}/static",
        "Where collectstatic gathers static files.",
        setting="STATIC_ROOT",
    ),
    Text(
        "RAG_LOG_LEVEL",
        "INFO",
        "The console log's level.",
        setting=None,
        shown_allowed="a level name",
    ),
    Bool("DJANGO_DEBUG", False, "Django's debug mode: off unless asked for.", setting="DEBUG"),
    Secret(
        "DJANGO_SECRET_KEY",
        "Django's signing key; generated once and kept in the data folder in development.",
        setting=None,
        shown_default="generated in development",
    ),
    List(
        "DJANGO_ALLOWED_HOSTS",
        ("127.0.0.1", "localhost", "testserver"),
        "The host names served (and the origins the chat socket accepts).",
        setting="ALLOWED_HOSTS",
    ),
    List(
        "DJANGO_CSRF_TRUSTED_ORIGINS",
        (),
        "Origins that may post forms besides the host.",
        setting="CSRF_TRUSTED_ORIGINS",
    ),
    Int("RAG_HSTS_SECONDS", 31_536_000, "Production's HSTS max-age.", minimum=0, setting=None),
    Bool(
        "RAG_HSTS_INCLUDE_SUBDOMAINS",
        True,
        "Whether HSTS covers subdomains.",
        setting="SECURE_HSTS_INCLUDE_SUBDOMAINS",
    ),
    Bool(
        "RAG_HSTS_PRELOAD",
        True,
        "Whether the site asks for the browsers' HSTS preload lists.",
        setting="SECURE_HSTS_PRELOAD",
    ),
    Bool("RAG_SSL_REDIRECT", True, "Production redirects plain HTTP to HTTPS.", setting=None),
    Text(
        "RAG_PROXY_SSL_HEADER",
        "",
        "The header a TLS-ending proxy sets to https; only if it always sets or strips it.",
        setting=None,
    ),
    Int(
        "RAG_PROXY_COUNT",
        0,
        "Proxies appending to X-Forwarded-For before daphne; 0 trusts the socket's peer only.",
        minimum=0,
    ),
    Int(
        "RAG_LOGIN_FAILURE_LIMIT",
        5,
        "Failed logins of one account from one address before a lockout.",
        minimum=1,
        setting="AXES_FAILURE_LIMIT",
    ),
    Int(
        "RAG_LOGIN_COOLOFF_MINUTES",
        15,
        "How long the first login lockout lasts; each further failure doubles it.",
        minimum=1,
        setting=None,
    ),
    Int(
        "RAG_LOGIN_COOLOFF_MAX_MINUTES",
        1440,
        "The longest login lockout; failures are remembered this long.",
        minimum=1,
        setting=None,
        also="at least RAG_LOGIN_COOLOFF_MINUTES",
    ),
    Int(
        "RAG_TOKEN_FAILURE_LIMIT",
        5,
        "Failures of one API token from one address before it is refused unread.",
        minimum=1,
    ),
    Int(
        "RAG_TOKEN_COOLOFF_MINUTES",
        15,
        "How long such a token is refused from that address.",
        minimum=1,
    ),
    Secret(
        "RAG_API_TOKEN_HASH_KEY",
        "The key API tokens are hashed with; changing it stops every token.",
        setting=None,
        shown_default="DJANGO_SECRET_KEY",
    ),
    Int(
        "RAG_MAX_JSON_BYTES",
        2 * 1024 * 1024,
        "The largest body besides uploaded files (JSON, a form) read into memory.",
        minimum=1024,
        setting="DATA_UPLOAD_MAX_MEMORY_SIZE",
    ),
    Int(
        "RAG_MAX_JSON_DEPTH",
        32,
        "The deepest nesting of arrays and objects a JSON body or socket message may have.",
        minimum=2,
    ),
    Bool(
        "RAG_API_SCHEMA_PUBLIC",
        False,
        "Whether the OpenAPI schema and Swagger UI are open to anyone, not only signed-in users.",
    ),
    Int(
        "RAG_API_PAGE_SIZE",
        25,
        "Items per REST API page unless the client asks.",
        minimum=1,
        setting=None,
    ),
)
